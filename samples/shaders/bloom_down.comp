// SPDX-License-Identifier: MIT
#version 450
// bloom_down.comp: one step down the bloom chain. The first step also keeps
// only what is brighter than the threshold (a soft knee).

layout(local_size_x = 8, local_size_y = 8) in;

layout(set = 0, binding = 0) uniform sampler2D src;
layout(set = 0, binding = 2, rgba16f) uniform writeonly image2D dst;

layout(push_constant) uniform Push {
	ivec2 dst_size;
	float threshold; // 0: no threshold
	float unused;
} push;

void main()
{
	ivec2 p = ivec2(gl_GlobalInvocationID.xy);
	if (any(greaterThanEqual(p, push.dst_size)))
		return;
	vec2 texel = 1.0 / vec2(textureSize(src, 0));
	vec2 uv = (vec2(p) + 0.5) / vec2(push.dst_size);
	// Four bilinear taps a texel off the centre cover a 4x4 footprint; the
	// centre tap weighs in to keep thin highlights from flickering.
	vec3 c = texture(src, uv).rgb * 0.5;
	c += texture(src, uv + texel * vec2(-1.0, -1.0)).rgb * 0.125;
	c += texture(src, uv + texel * vec2(1.0, -1.0)).rgb * 0.125;
	c += texture(src, uv + texel * vec2(-1.0, 1.0)).rgb * 0.125;
	c += texture(src, uv + texel * vec2(1.0, 1.0)).rgb * 0.125;
	if (push.threshold > 0.0) {
		float peak = max(c.r, max(c.g, c.b));
		float knee = push.threshold * 0.5;
		float soft = clamp(peak - push.threshold + knee, 0.0, 2.0 * knee);
		soft = soft * soft / (4.0 * knee + 1e-4);
		c *= max(soft, peak - push.threshold) / max(peak, 1e-4);
	}
	imageStore(dst, p, vec4(c, 1.0));
}
