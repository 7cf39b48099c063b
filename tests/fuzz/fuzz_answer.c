/* SPDX-License-Identifier: MIT */
/*
 * fuzz_answer.c: libFuzzer target for the answers `crumbs trigger` reads
 * on its reply socket (trigger/answer.c), which anyone who can write to that
 * socket may send. Any bytes are read as a datagram into lines of several
 * sizes. What is read must be what trigger.h promises: a run queued never
 * ends before it begins, one frame is its own first and last, and a path
 * or message fits its line, is valid UTF-8 and holds no control
 * character. Aborts otherwise.
 */
#include "../../trigger/trigger.h"
#include "../../util/util.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const size_t sizes[] = { 1, 16, 4096 };
	char *line = malloc(4096);
	if (!line)
		return 0;
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		struct queued q = { 0 };
		memset(line, 'x', 4096);
		switch (trigger_answer_read((const char *)data, size, line, sizes[k], &q)) {
		case ANSWER_QUEUED:
			if (q.last < q.first || (!q.run && q.last != q.first))
				abort();
			break;
		case ANSWER_CAPTURED:
		case ANSWER_ERROR: {
			const char *end = memchr(line, '\0', sizes[k]);
			if (!end)
				abort();
			/* Valid UTF-8 with no control character, C1 included. */
			for (const unsigned char *c = (const unsigned char *)line;
			     c < (const unsigned char *)end;) {
				size_t n = utf8_sequence(c, (size_t)((const unsigned char *)end - c));
				if (n == 0 || (n == 1 && (*c < 0x20 || *c == 0x7F)) ||
				    (n == 2 && c[0] == 0xC2 && c[1] < 0xA0))
					abort();
				c += n;
			}
			break;
		}
		case ANSWER_NONE:
			break;
		}
	}
	free(line);
	return 0;
}
