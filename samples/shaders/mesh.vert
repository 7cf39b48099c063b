// SPDX-License-Identifier: MIT
#version 450
// mesh.vert: the G-buffer pass's vertex stage. Objects are fetched by
// gl_InstanceIndex (the draw's firstInstance), so a batch of draws binds
// nothing between draws.

layout(location = 0) in vec3 in_position;
layout(location = 1) in vec3 in_normal;

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
	uvec4 params; // width, height, light count, frame
	Light lights[64];
} frame;

struct Object {
	mat4 model;
	vec4 color;
	vec4 material; // x roughness, y checker pattern
};

layout(set = 0, binding = 1, std430) readonly buffer Objects {
	Object objects[];
};

layout(location = 0) out vec3 out_world_position;
layout(location = 1) out vec3 out_normal;
layout(location = 2) flat out uint out_object;

void main()
{
	Object o = objects[gl_InstanceIndex];
	vec4 world = o.model * vec4(in_position, 1.0);
	out_world_position = world.xyz;
	// Rotation and uniform scale only, so the model matrix turns normals too.
	out_normal = mat3(o.model) * in_normal;
	out_object = uint(gl_InstanceIndex);
	gl_Position = frame.view_proj * world;
}
