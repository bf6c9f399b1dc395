/* SPDX-License-Identifier: MIT */
/*
 * kgc_api.h - the one export macro of libkgc and libkgc-native. Both build
 * with -fvisibility=hidden; a definition marked KGC_API is a public entry
 * point (the version scripts then keep kgc_* only). Included by
 * gc_internal.h (the core) and native/native_internal.h (the bridge), and
 * first of all by the files that turn kgc.h's inline fast paths into
 * exported definitions (mutator/alloc.c, mutator/critical.c).
 * Programs mark their natives with kgc_native.h's KGC_NATIVE_EXPORT.
 */
#ifndef KGC_API_H
#define KGC_API_H

#define KGC_API __attribute__((visibility("default")))

#endif
