/* SPDX-License-Identifier: MIT */
/* png.h - a minimal PNG writer: 8-bit RGB, stored (uncompressed) deflate. */
#ifndef KGCS_PNG_H
#define KGCS_PNG_H
#include <stdint.h>
#include <stdio.h>

uint32_t kgcs_crc32(uint32_t crc, const uint8_t *p, size_t n);	/* start with 0 */
uint32_t kgcs_adler32(uint32_t a, const uint8_t *p, size_t n);	/* start with 1 */
/* rgb: h rows of w pixels, 3 bytes each. 0, or -1 with errno (write error). */
int kgcs_png_write(FILE *f, const uint8_t *rgb, uint32_t w, uint32_t h);

#endif
