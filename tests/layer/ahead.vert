#version 450
// SPDX-License-Identifier: MIT
// ahead.c's quads: four vertices of a triangle strip, a small square
// placed on a grid by the draw's first instance.
void main()
{
	vec2 corner = vec2(gl_VertexIndex & 1, gl_VertexIndex >> 1);
	vec2 cell = vec2(gl_InstanceIndex % 32, (gl_InstanceIndex / 32) % 32);
	gl_Position = vec4((cell + corner * 0.8) / 16.0 - 1.0, 0.0, 1.0);
}
