// SPDX-License-Identifier: MIT
#version 450
// shadow.vert: depth only, into the cascade chosen by the push constant.

layout(location = 0) in vec3 in_position;

// Keep in step with struct frame_uniforms in renderer.c.
struct Light {
	vec4 position_radius;
	vec4 color;
};

layout(set = 0, binding = 0, std140) uniform Frame {
	mat4 view_proj;
	mat4 inv_view_proj;
	mat4 shadow_view_proj[4];
	vec4 camera_position;
	vec4 sun_direction;
	vec4 sun_color;
	vec4 ambient;
	vec4 cascade_texel;
	uvec4 params;
	Light lights[64];
} frame;

struct Object {
	mat4 model;
	vec4 color;
	vec4 material;
};

layout(set = 0, binding = 1, std430) readonly buffer Objects {
	Object objects[];
};

layout(push_constant) uniform Push {
	uint view;
} push;

void main()
{
	vec4 world = objects[gl_InstanceIndex].model * vec4(in_position, 1.0);
	gl_Position = frame.shadow_view_proj[push.view] * world;
}
