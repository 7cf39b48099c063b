#version 450
// SPDX-License-Identifier: MIT
// ahead.c's quads are white.
layout(location = 0) out vec4 color;

void main()
{
	color = vec4(1.0);
}
