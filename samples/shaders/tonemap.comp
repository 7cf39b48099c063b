// SPDX-License-Identifier: MIT
#version 450
// tonemap.comp: HDR plus bloom, exposed, through a filmic curve, vignetted
// and sRGB-encoded into the final 8-bit image.

layout(local_size_x = 8, local_size_y = 8) in;

layout(set = 0, binding = 0) uniform sampler2D hdr;
layout(set = 0, binding = 1) uniform sampler2D bloom;
layout(set = 0, binding = 2, rgba8) uniform writeonly image2D ldr;

layout(set = 0, binding = 3, std430) readonly buffer Exposure {
	float average_luminance;
	float exposure;
} result;

layout(push_constant) uniform Push {
	ivec2 size;
	float bloom_strength;
	float unused;
} push;

vec3 aces_fit(vec3 x)
{
	return clamp((x * (2.51 * x + 0.03)) / (x * (2.43 * x + 0.59) + 0.14), 0.0, 1.0);
}

vec3 srgb_encode(vec3 c)
{
	vec3 lo = c * 12.92;
	vec3 hi = 1.055 * pow(c, vec3(1.0 / 2.4)) - 0.055;
	return mix(hi, lo, lessThanEqual(c, vec3(0.0031308)));
}

void main()
{
	ivec2 p = ivec2(gl_GlobalInvocationID.xy);
	if (any(greaterThanEqual(p, push.size)))
		return;
	vec2 uv = (vec2(p) + 0.5) / vec2(push.size);
	vec3 c = texelFetch(hdr, p, 0).rgb + texture(bloom, uv).rgb * push.bloom_strength;
	c = aces_fit(c * result.exposure);
	vec2 q = uv - 0.5;
	c *= 1.0 - 0.35 * dot(q, q) * 2.0;
	imageStore(ldr, p, vec4(srgb_encode(c), 1.0));
}
