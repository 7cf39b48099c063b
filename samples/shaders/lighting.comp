// SPDX-License-Identifier: MIT
#version 450
// lighting.comp: tiled deferred lighting. Each 16x16 tile bounds its pixels'
// world positions, keeps the point lights whose spheres touch that box, and
// shades its pixels with the sun (cascaded shadows) and those lights.

layout(local_size_x = 16, local_size_y = 16) in;

#define MAX_LIGHTS 64
#define CASCADES 4

// Keep in step with struct frame_uniforms in renderer.c.
struct Light {
	vec4 position_radius;
	vec4 color;
};

layout(set = 0, binding = 0, std140) uniform Frame {
	mat4 view_proj;
	mat4 inv_view_proj;
	mat4 shadow_view_proj[CASCADES];
	vec4 camera_position;
	vec4 sun_direction;
	vec4 sun_color;
	vec4 ambient;
	vec4 cascade_texel; // world size of a shadow texel, per cascade
	uvec4 params;       // width, height, light count, frame
	Light lights[MAX_LIGHTS];
} frame;

layout(set = 0, binding = 1) uniform sampler2D albedo_tex;
layout(set = 0, binding = 2) uniform sampler2D normal_tex;
layout(set = 0, binding = 3) uniform sampler2D depth_tex;
layout(set = 0, binding = 4) uniform sampler2DArrayShadow shadow_tex;
layout(set = 0, binding = 5, rgba16f) uniform writeonly image2D hdr_out;

shared uint tile_min[3];
shared uint tile_max[3];
// A mask, not a list filled with atomicAdd: lights are then summed in index
// order whatever order the threads ran in, so every run gives the same bits.
shared uint tile_lights[MAX_LIGHTS / 32];

// Floats as unsigned integers in the same order, for atomicMin/atomicMax.
uint ordered_bits(float f)
{
	uint u = floatBitsToUint(f);
	return (u & 0x80000000u) != 0u ? ~u : (u | 0x80000000u);
}

float ordered_float(uint u)
{
	return uintBitsToFloat((u & 0x80000000u) != 0u ? (u & 0x7fffffffu) : ~u);
}

float sun_shadow(vec3 world, vec3 normal)
{
	float texel = 1.0 / float(textureSize(shadow_tex, 0).x);
	for (int k = 0; k < CASCADES; k++) {
		// Offsetting along the normal by about a texel keeps surfaces
		// from shadowing themselves without a large depth bias.
		vec3 p = world + normal * frame.cascade_texel[k] * 1.5;
		vec4 s = frame.shadow_view_proj[k] * vec4(p, 1.0);
		vec2 uv = s.xy * 0.5 + 0.5;
		if (any(lessThan(uv, vec2(0.02))) || any(greaterThan(uv, vec2(0.98))) ||
		    s.z <= 0.0 || s.z >= 1.0)
			continue;
		float lit = 0.0;
		for (int y = -1; y <= 1; y++)
			for (int x = -1; x <= 1; x++)
				lit += texture(shadow_tex,
					       vec4(uv + vec2(x, y) * texel, float(k), s.z));
		return lit / 9.0;
	}
	return 1.0;
}

vec3 shade(vec3 albedo, float roughness, vec3 n, vec3 v, vec3 l)
{
	float ndl = max(dot(n, l), 0.0);
	vec3 h = normalize(l + v);
	float shininess = mix(96.0, 4.0, roughness);
	float spec = pow(max(dot(n, h), 0.0), shininess) * (1.0 - roughness) * 0.6;
	return (albedo + vec3(spec)) * ndl;
}

void main()
{
	ivec2 size = ivec2(frame.params.xy);
	ivec2 pixel = ivec2(gl_GlobalInvocationID.xy);
	uint local = gl_LocalInvocationIndex;
	bool inside = all(lessThan(pixel, size));

	if (local == 0u) {
		for (int i = 0; i < 3; i++) {
			tile_min[i] = 0xffffffffu;
			tile_max[i] = 0u;
		}
	}
	if (local < uint(MAX_LIGHTS / 32))
		tile_lights[local] = 0u;
	memoryBarrierShared();
	barrier();

	float depth = inside ? texelFetch(depth_tex, pixel, 0).r : 1.0;
	bool geometry = depth < 1.0;
	vec2 ndc = (vec2(pixel) + 0.5) / vec2(size) * 2.0 - 1.0;
	vec4 h = frame.inv_view_proj * vec4(ndc, depth, 1.0);
	vec3 world = h.xyz / h.w;
	if (geometry) {
		for (int i = 0; i < 3; i++) {
			atomicMin(tile_min[i], ordered_bits(world[i]));
			atomicMax(tile_max[i], ordered_bits(world[i]));
		}
	}
	memoryBarrierShared();
	barrier();

	if (tile_max[0] != 0u) {
		vec3 lo = vec3(ordered_float(tile_min[0]), ordered_float(tile_min[1]),
			       ordered_float(tile_min[2]));
		vec3 hi = vec3(ordered_float(tile_max[0]), ordered_float(tile_max[1]),
			       ordered_float(tile_max[2]));
		for (uint i = local; i < frame.params.z; i += 256u) {
			vec4 pr = frame.lights[i].position_radius;
			vec3 d = clamp(pr.xyz, lo, hi) - pr.xyz;
			if (dot(d, d) <= pr.w * pr.w)
				atomicOr(tile_lights[i / 32u], 1u << (i % 32u));
		}
	}
	memoryBarrierShared();
	barrier();

	if (!inside)
		return;
	vec3 view_dir = normalize(world - frame.camera_position.xyz);
	if (!geometry) {
		float up = clamp(view_dir.y * 0.5 + 0.5, 0.0, 1.0);
		vec3 sky = mix(vec3(0.35, 0.32, 0.30), vec3(0.25, 0.45, 0.85), up);
		imageStore(hdr_out, pixel, vec4(sky, 1.0));
		return;
	}

	vec4 a = texelFetch(albedo_tex, pixel, 0);
	vec3 albedo = a.rgb;
	float roughness = a.a;
	vec3 n = normalize(texelFetch(normal_tex, pixel, 0).xyz);
	vec3 v = -view_dir;
	vec3 sun = frame.sun_direction.xyz;

	vec3 color = albedo * frame.ambient.rgb * (0.6 + 0.4 * n.y);
	if (dot(n, sun) > 0.0)
		color += shade(albedo, roughness, n, v, sun) * frame.sun_color.rgb *
			 sun_shadow(world, n);
	for (uint w = 0u; w < uint(MAX_LIGHTS / 32); w++) {
		uint bits = tile_lights[w];
		while (bits != 0u) {
			uint i = w * 32u + uint(findLSB(bits));
			bits &= bits - 1u;
			vec4 pr = frame.lights[i].position_radius;
			vec3 to_light = pr.xyz - world;
			float d = length(to_light);
			float falloff = clamp(1.0 - (d * d) / (pr.w * pr.w), 0.0, 1.0);
			falloff *= falloff / (1.0 + d * d);
			color += shade(albedo, roughness, n, v, to_light / max(d, 1e-4)) *
				 frame.lights[i].color.rgb * falloff;
		}
	}
	imageStore(hdr_out, pixel, vec4(color, 1.0));
}
