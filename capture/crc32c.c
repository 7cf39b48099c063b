/*
 * crc32c.c: CRC-32C (Castagnoli), the checksum of the capture format's own
 * headers and of every compressed chunk.
 *
 * Slicing by eight: eight tables let the loop consume eight bytes per step,
 * which matters because `crumbs info` checks every byte of large captures.
 * On x86-64 processors with SSE 4.2 (found at run time) the crc32
 * instruction does the same, a few times faster.
 */
#include "crumbs.h"

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
__attribute__((target("sse4.2"))) static uint32_t crc32c_hardware(uint32_t crc, const void *data,
								   size_t size)
{
	const unsigned char *p = data;
	uint64_t c = ~crc;
	while (size > 0 && ((uintptr_t)p & 7) != 0) {
		c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
		size--;
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
