/* SPDX-License-Identifier: MIT */
/*
 * png_check FILE - reads a PNG kgcstat --png wrote: signature, chunk CRCs,
 * IHDR (8-bit RGB), the zlib stream's stored blocks and Adler-32, filter 0
 * rows; samples each cell's centre and prints one line of counts per map
 * character ("E 0 S 3 O 5 ..."), the format kgcstat --map's last line has
 * after its names are dropped. Exits 1 with a message on any fault.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../mapcolors.h"
#include "../png.h"

static uint8_t buf[1 << 24];

static uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void fail(const char *m)
{
	fprintf(stderr, "png_check: %s\n", m);
	exit(1);
}

/* Stored-block zlib z[n] into out; returns the length. */
static size_t inflate_stored(const uint8_t *z, size_t n, uint8_t *out, size_t cap)
{
	size_t k = 2, o = 0;
	int final = 0;

	if (n < 6 || (z[0] << 8 | z[1]) % 31 || (z[0] & 0x0f) != 8)
		fail("bad zlib header");
	while (!final) {
		uint16_t len, nlen;

		if (k + 5 > n || (z[k] & 6))
			fail("not a stored block");
		final = z[k] & 1;
		len = (uint16_t)(z[k + 1] | z[k + 2] << 8);
		nlen = (uint16_t)(z[k + 3] | z[k + 4] << 8);
		if ((nlen ^ len) != 0xffff || k + 5 + len > n || o + len > cap)
			fail("bad stored block length");
		memcpy(out + o, z + k + 5, len);
		o += len;
		k += 5 + len;
	}
	if (k + 4 != n || rd32(z + k) != kgcs_adler32(1, out, o))
		fail("bad adler32");
	return o;
}

int main(int argc, char **argv)
{
	static uint8_t idat[1 << 24], raw[1 << 24];
	FILE *f = argc == 2 ? fopen(argv[1], "rb") : NULL;
	size_t n, k = 8, ni = 0, nr;
	uint32_t w = 0, h = 0, count[KGCS_NCOLORS] = { 0 };

	if (!f)
		fail("usage: png_check FILE");
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	if (n < 8 || memcmp(buf, "\x89PNG\r\n\x1a\n", 8))
		fail("no PNG signature");
	while (k + 12 <= n) {
		uint32_t len = rd32(buf + k);
		const uint8_t *type = buf + k + 4;

		if (k + 12 + len > n || rd32(buf + k + 8 + len) != kgcs_crc32(0, type, 4 + len))
			fail("bad chunk CRC or length");
		if (!memcmp(type, "IHDR", 4)) {
			w = rd32(type + 4), h = rd32(type + 8);
			if (type[12] != 8 || type[13] != 2)
				fail("not 8-bit RGB");
		} else if (!memcmp(type, "IDAT", 4)) {
			memcpy(idat + ni, type + 4, len);
			ni += len;
		} else if (!memcmp(type, "IEND", 4)) {
			break;
		}
		k += 12 + len;
	}
	nr = inflate_stored(idat, ni, raw, sizeof(raw));
	if (!w || nr != (size_t)h * (w * 3 + 1))
		fail("image data does not match IHDR");
	for (uint32_t y = KGCS_CELL / 2 + 1; y < h; y += KGCS_CELL + 1)
		for (uint32_t x = KGCS_CELL / 2 + 1; x < w; x += KGCS_CELL + 1) {
			const uint8_t *px = raw + (size_t)y * (w * 3 + 1) + 1 + (size_t)x * 3;

			if (raw[(size_t)y * (w * 3 + 1)])
				fail("row filter not 0");
			for (size_t c = 0; c < KGCS_NCOLORS; c++)
				count[c] += !memcmp(px, kgcs_colors[c].rgb, 3);
		}
	printf("%ux%u", w, h);
	for (size_t c = 0; c < KGCS_NCOLORS; c++)
		printf(" %c %u", kgcs_colors[c].c, count[c]);
	printf("\n");
	return 0;
}
