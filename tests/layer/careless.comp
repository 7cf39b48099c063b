// SPDX-License-Identifier: MIT
#version 450
// careless.comp: GPU work for tests/layer/careless.c to time. Each
// invocation scrambles one word of the buffer `rounds` times.

layout(local_size_x = 64) in;

layout(set = 0, binding = 0, std430) buffer Words {
	uint words[];
};

layout(push_constant) uniform Push {
	uint rounds;
} push;

void main()
{
	uint i = gl_GlobalInvocationID.x;
	uint v = words[i] + i;
	for (uint k = 0u; k < push.rounds; k++)
		v = v * 1664525u + 1013904223u;
	words[i] = v;
}
