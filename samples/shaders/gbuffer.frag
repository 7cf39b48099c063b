// SPDX-License-Identifier: MIT
#version 450
// gbuffer.frag: writes albedo and roughness, and the world-space normal.

layout(location = 0) in vec3 in_world_position;
layout(location = 1) in vec3 in_normal;
layout(location = 2) flat in uint in_object;

struct Object {
	mat4 model;
	vec4 color;
	vec4 material; // x roughness, y checker pattern
};

layout(set = 0, binding = 1, std430) readonly buffer Objects {
	Object objects[];
};

layout(location = 0) out vec4 out_albedo; // rgb albedo, a roughness
layout(location = 1) out vec4 out_normal; // xyz world normal

void main()
{
	vec3 albedo = objects[in_object].color.rgb;
	vec4 material = objects[in_object].material;
	if (material.y > 0.0) {
		ivec2 cell = ivec2(floor(in_world_position.xz / material.y));
		albedo *= ((cell.x + cell.y) & 1) == 0 ? 1.0 : 0.6;
	}
	out_albedo = vec4(albedo, material.x);
	out_normal = vec4(normalize(in_normal), 0.0);
}
