// SPDX-License-Identifier: MIT
#version 450
// exposure.comp: the average log luminance of a 64x32 grid of samples of
// the HDR image, reduced in one workgroup in a fixed order (so the result
// is the same bits every run), turned into an exposure.

layout(local_size_x = 256) in;

layout(set = 0, binding = 0) uniform sampler2D hdr;

layout(set = 0, binding = 3, std430) buffer Exposure {
	float average_luminance;
	float exposure;
} result;

shared float partial[256];

void main()
{
	uint i = gl_LocalInvocationIndex;
	float sum = 0.0;
	for (uint s = 0u; s < 8u; s++) {
		uint n = i * 8u + s;
		vec2 uv = (vec2(n % 64u, n / 64u) + 0.5) / vec2(64.0, 32.0);
		vec3 c = textureLod(hdr, uv, 0.0).rgb;
		sum += log(max(dot(c, vec3(0.2126, 0.7152, 0.0722)), 1e-4));
	}
	partial[i] = sum;
	memoryBarrierShared();
	barrier();
	for (uint stride = 128u; stride > 0u; stride >>= 1) {
		if (i < stride)
			partial[i] += partial[i + stride];
		memoryBarrierShared();
		barrier();
	}
	if (i == 0u) {
		float average = exp(partial[0] / 2048.0);
		result.average_luminance = average;
		result.exposure = clamp(0.2 / max(average, 1e-4), 0.25, 4.0);
	}
}
