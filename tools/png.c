/* SPDX-License-Identifier: MIT */
/*
 * png.c - writes an 8-bit RGB PNG with no library: the zlib stream holds
 * stored deflate blocks (RFC 1951 BTYPE 00, at most 65535 bytes each) and
 * an Adler-32; every chunk ends with its CRC-32 (RFC 2083).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "png.h"

uint32_t kgcs_crc32(uint32_t crc, const uint8_t *p, size_t n)
{
	crc = ~crc;
	while (n--) {
		crc ^= *p++;
		for (int k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0xedb88320u & -(crc & 1));
	}
	return ~crc;
}

uint32_t kgcs_adler32(uint32_t adler, const uint8_t *p, size_t n)
{
	uint32_t a = adler & 0xffff, b = adler >> 16;

	while (n--) {
		a = (a + *p++) % 65521;
		b = (b + a) % 65521;
	}
	return b << 16 | a;
}

static void be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static int chunk(FILE *f, const char type[4], const uint8_t *data, uint32_t n)
{
	uint8_t len[4], crc[4];
	uint32_t c = kgcs_crc32(kgcs_crc32(0, (const uint8_t *)type, 4), data, n);

	be32(len, n);
	be32(crc, c);
	return fwrite(len, 1, 4, f) == 4 && fwrite(type, 1, 4, f) == 4 &&
	       fwrite(data, 1, n, f) == n && fwrite(crc, 1, 4, f) == 4 ? 0 : -1;
}

/* The zlib stream of raw[n] in stored blocks, into a malloc'd buffer. */
static uint8_t *zlib_stored(const uint8_t *raw, size_t n, size_t *outn)
{
	size_t nblocks = n / 65535 + 1, k = 0;
	uint8_t *z = malloc(2 + n + nblocks * 5 + 4);

	if (!z)
		return NULL;
	z[k++] = 0x78;	/* CM 8, 32K window */
	z[k++] = 0x01;	/* FCHECK: 0x7801 % 31 == 0, no dictionary, fastest */
	for (size_t off = 0;; ) {
		uint16_t len = (uint16_t)(n - off > 65535 ? 65535 : n - off);

		z[k++] = off + len == n;	/* BFINAL, BTYPE 00 */
		z[k++] = (uint8_t)len;
		z[k++] = (uint8_t)(len >> 8);
		z[k++] = (uint8_t)~len;
		z[k++] = (uint8_t)(~len >> 8);
		memcpy(z + k, raw + off, len);
		k += len;
		off += len;
		if (off == n)
			break;
	}
	be32(z + k, kgcs_adler32(1, raw, n));
	*outn = k + 4;
	return z;
}

int kgcs_png_write(FILE *f, const uint8_t *rgb, uint32_t w, uint32_t h)
{
	static const uint8_t sig[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };
	size_t row = (size_t)w * 3 + 1, zn;
	uint8_t ihdr[13] = { 0 }, *raw = malloc(row * h), *z;
	int ret;

	if (!raw)
		return -1;
	for (uint32_t y = 0; y < h; y++) {
		raw[y * row] = 0;	/* filter: none */
		memcpy(raw + y * row + 1, rgb + (size_t)y * w * 3, (size_t)w * 3);
	}
	z = zlib_stored(raw, row * h, &zn);
	free(raw);
	if (!z)
		return -1;
	be32(ihdr, w);
	be32(ihdr + 4, h);
	ihdr[8] = 8;	/* bit depth */
	ihdr[9] = 2;	/* colour type: RGB */
	ret = fwrite(sig, 1, 8, f) == 8 && !chunk(f, "IHDR", ihdr, 13) &&
	      !chunk(f, "IDAT", z, (uint32_t)zn) && !chunk(f, "IEND", NULL, 0) ? 0 : -1;
	free(z);
	return ret;
}
