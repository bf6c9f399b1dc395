/* SPDX-License-Identifier: MIT */
/*
 * native_err.c - the bridge's error messages: kgcn_error sets this
 * thread's kgc_last_error and keeps the text for kgcn_error_msg. The
 * bottom layer of libkgc-native (every other file may call it).
 */
#include <stdarg.h>
#include <stdio.h>

#include "native_internal.h"

static __thread char native_errbuf[512];

void kgcn_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(native_errbuf, sizeof(native_errbuf), fmt, ap);
	va_end(ap);
	kgc_ext_error("%s", native_errbuf);
}

const char *kgcn_error_msg(void)
{
	return native_errbuf;
}
