/* SPDX-License-Identifier: MIT */
/*
 * crc32c.c: CRC-32C (Castagnoli), the checksum of the capture format's own
 * headers and of every compressed chunk.
 *
 * Slicing by eight: eight tables let the loop consume eight bytes per step,
 * which matters because `crumbs info` checks every byte of large captures.
 * On x86-64 processors with SSE 4.2 (found at run time) the crc32
 * instruction does the same, a few times faster; on three lanes at once,
 * three times faster again (below).
 */
#include "../include/crumbs_file.h"

#include <pthread.h>
#include <string.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "crc32c.c reads words as little-endian"
#endif

#define CRC32C_POLY 0x82F63B78u /* 0x1EDC6F41 reflected */

static uint32_t crc_tables[8][256];

/* Built before main() so that threads never race to build it. */
__attribute__((constructor)) static void crc_tables_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (CRC32C_POLY & (0u - (c & 1u)));
		crc_tables[0][i] = c;
	}
	for (uint32_t i = 0; i < 256; i++)
		for (int t = 1; t < 8; t++)
			crc_tables[t][i] = (crc_tables[t - 1][i] >> 8) ^
					   crc_tables[0][crc_tables[t - 1][i] & 0xFF];
}

#if defined(__x86_64__) && defined(__GNUC__)
#define CRC32C_HARDWARE 1

/*
 * The crc32 instruction takes three cycles and can start one a cycle, so
 * one chain of them runs at a third of its speed. Three chains over three
 * lanes of CRC_LANE bytes each run at full speed, and are joined: the
 * register (without the inversions around it) is linear in its state and
 * the bytes, so the state after A B C is that after A moved on by
 * 2 CRC_LANE zero bytes, plus that of B from 0 moved on by CRC_LANE zero
 * bytes, plus that of C from 0. Moving a state on by n zero bytes is a
 * 32 x 32 bit matrix, kept as one table per byte of the state.
 */
#define CRC_LANE 1024
static uint32_t crc_skip1[4][256], crc_skip2[4][256]; /* CRC_LANE, 2 CRC_LANE zero bytes */

/* The register c moved on by n zero bytes. */
static uint32_t crc_zeros(uint32_t c, size_t n)
{
	while (n--)
		c = (c >> 8) ^ crc_tables[0][c & 0xFF];
	return c;
}

static void crc_skip_table(uint32_t skip[4][256], const uint32_t column[32])
{
	for (int k = 0; k < 4; k++)
		for (uint32_t b = 0; b < 256; b++) {
			uint32_t v = 0;
			for (int j = 0; j < 8; j++)
				if (b & (1u << j))
					v ^= column[8 * k + j];
			skip[k][b] = v;
		}
}

static inline uint32_t crc_skip(uint32_t skip[4][256], uint32_t c)
{
	return skip[0][c & 0xFF] ^ skip[1][(c >> 8) & 0xFF] ^ skip[2][(c >> 16) & 0xFF] ^
	       skip[3][c >> 24];
}

/* The tables of a lane and of two: each bit's state moved on by a lane
 * of zero bytes (32 K steps), then by another. That is too much work to do
 * before main() in every program that loads libcrumbs or the layer, so
 * they are built at the first input long enough for the lanes
 * (pthread_once). */
static pthread_once_t crc_skip_once = PTHREAD_ONCE_INIT;

static void crc_skip_init(void)
{
	uint32_t column[32];
	for (int i = 0; i < 32; i++)
		column[i] = crc_zeros(1u << i, CRC_LANE);
	crc_skip_table(crc_skip1, column);
	for (int i = 0; i < 32; i++)
		column[i] = crc_skip(crc_skip1, column[i]);
	crc_skip_table(crc_skip2, column);
}

__attribute__((target("sse4.2"))) static uint32_t crc32c_hardware(uint32_t crc, const void *data,
								   size_t size)
{
	const unsigned char *p = data;
	uint64_t c = ~crc;
	while (size > 0 && ((uintptr_t)p & 7) != 0) {
		c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
		size--;
	}
	if (size >= 3 * CRC_LANE)
		pthread_once(&crc_skip_once, crc_skip_init);
	for (; size >= 3 * CRC_LANE; p += 3 * CRC_LANE, size -= 3 * CRC_LANE) {
		uint64_t b = 0, d = 0;
		for (size_t i = 0; i < CRC_LANE; i += 8) {
			uint64_t w[3];
			memcpy(&w[0], p + i, 8);
			memcpy(&w[1], p + CRC_LANE + i, 8);
			memcpy(&w[2], p + 2 * CRC_LANE + i, 8);
			c = __builtin_ia32_crc32di(c, w[0]);
			b = __builtin_ia32_crc32di(b, w[1]);
			d = __builtin_ia32_crc32di(d, w[2]);
		}
		c = crc_skip(crc_skip2, (uint32_t)c) ^ crc_skip(crc_skip1, (uint32_t)b) ^ (uint32_t)d;
	}
	for (; size >= 8; p += 8, size -= 8) {
		uint64_t w;
		memcpy(&w, p, 8);
		c = __builtin_ia32_crc32di(c, w);
	}
	while (size-- > 0)
		c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
	return ~(uint32_t)c;
}

static int crc32c_has_hardware;

__attribute__((constructor)) static void crc32c_detect(void)
{
	__builtin_cpu_init();
	crc32c_has_hardware = __builtin_cpu_supports("sse4.2");
}
#endif

/* Set by the unit tests, so that they check the tables on any machine. */
int crc32c_tables_only;

uint32_t crumbs_crc32c(uint32_t crc, const void *data, size_t size)
{
#ifdef CRC32C_HARDWARE
	if (crc32c_has_hardware && !crc32c_tables_only)
		return crc32c_hardware(crc, data, size);
#endif
	const unsigned char *p = data;
	uint32_t c = ~crc;

	while (size > 0 && ((uintptr_t)p & 7) != 0) {
		c = (c >> 8) ^ crc_tables[0][(c ^ *p++) & 0xFF];
		size--;
	}
	while (size >= 8) {
		uint32_t lo, hi;
		memcpy(&lo, p, 4);
		memcpy(&hi, p + 4, 4);
		lo ^= c;
		c = crc_tables[7][lo & 0xFF] ^ crc_tables[6][(lo >> 8) & 0xFF] ^
		    crc_tables[5][(lo >> 16) & 0xFF] ^ crc_tables[4][lo >> 24] ^
		    crc_tables[3][hi & 0xFF] ^ crc_tables[2][(hi >> 8) & 0xFF] ^
		    crc_tables[1][(hi >> 16) & 0xFF] ^ crc_tables[0][hi >> 24];
		p += 8;
		size -= 8;
	}
	while (size-- > 0)
		c = (c >> 8) ^ crc_tables[0][(c ^ *p++) & 0xFF];
	return ~c;
}
