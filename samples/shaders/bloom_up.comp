// SPDX-License-Identifier: MIT
#version 450
// bloom_up.comp: one step up the bloom chain: this level of the down chain
// plus a tent-filtered upsample of the level below it.

layout(local_size_x = 8, local_size_y = 8) in;

layout(set = 0, binding = 0) uniform sampler2D low;  // the up chain, one level smaller
layout(set = 0, binding = 1) uniform sampler2D down; // the down chain, this level
layout(set = 0, binding = 2, rgba16f) uniform writeonly image2D dst;

layout(push_constant) uniform Push {
	ivec2 dst_size;
	float has_low; // 0: the smallest level, nothing below it
	float radius;
} push;

void main()
{
	ivec2 p = ivec2(gl_GlobalInvocationID.xy);
	if (any(greaterThanEqual(p, push.dst_size)))
		return;
	vec3 c = texelFetch(down, p, 0).rgb;
	if (push.has_low > 0.0) {
		vec2 uv = (vec2(p) + 0.5) / vec2(push.dst_size);
		vec2 d = push.radius / vec2(textureSize(low, 0));
		vec3 t = texture(low, uv).rgb * 4.0;
		t += (texture(low, uv + vec2(-d.x, 0.0)).rgb + texture(low, uv + vec2(d.x, 0.0)).rgb +
		      texture(low, uv + vec2(0.0, -d.y)).rgb + texture(low, uv + vec2(0.0, d.y)).rgb) * 2.0;
		t += texture(low, uv - d).rgb + texture(low, uv + d).rgb +
		     texture(low, uv + vec2(-d.x, d.y)).rgb + texture(low, uv + vec2(d.x, -d.y)).rgb;
		c += t / 16.0;
	}
	imageStore(dst, p, vec4(c, 1.0));
}
