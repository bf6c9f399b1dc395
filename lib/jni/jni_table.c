/* SPDX-License-Identifier: MIT */
/*
 * jni_table.c - the function tables, with the exact layout of the JDK's
 * <jni.h>. Every slot is filled: first a stub per slot (jni_slots.h, the
 * list generated from <jni.h>) that aborts naming the function, then the
 * implemented functions (jni_impl.h) over their stubs. A slot can be
 * neither forgotten nor NULL; jni_table's test checks both.
 */
#include <stdio.h>
#include <stdlib.h>

#include "jni_internal.h"

/* one slot per pointer: the generated list is the header's table */
#define KGCJ_COUNT(n) +1
_Static_assert(sizeof(struct JNINativeInterface_) == (0 KGCJ_ENV_SLOTS(KGCJ_COUNT)) * sizeof(void *),
	       "jni_slots.h does not match <jni.h>: regenerate it with gen_slots.sh");
_Static_assert(sizeof(struct JNIInvokeInterface_) == (0 KGCJ_VM_SLOTS(KGCJ_COUNT)) * sizeof(void *),
	       "jni_slots.h does not match <jni.h> (JNIInvokeInterface_)");

static __attribute__((noreturn, cold)) void unimplemented(const char *name)
{
	kgcj_fatal(name, "not implemented by libkgc-jni");
}

#define STUB(n) static void stub_##n(void) { unimplemented(#n); }
KGCJ_ENV_SLOTS(STUB)
#undef STUB
#define STUB(n) static void vstub_##n(void) { unimplemented("JavaVM " #n); }
KGCJ_VM_SLOTS(STUB)
#undef STUB

/* (void (*)(void) converts to any function pointer type: -Wcast-function-type allows it) */
#define SLOT_STUB(n) .n = (__typeof__(((struct JNINativeInterface_ *)0)->n))stub_##n,
#define SLOT_IMPL(n) .n = kgcj_##n,
#define VSLOT_STUB(n) .n = (__typeof__(((struct JNIInvokeInterface_ *)0)->n))vstub_##n,
#define VSLOT_IMPL(n) .n = kgcj_vm_##n,

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Woverride-init"
const struct JNINativeInterface_ kgcj_env_fns = {
	KGCJ_ENV_SLOTS(SLOT_STUB)
	KGCJ_IMPLEMENTED(SLOT_IMPL)
};

const struct JNIInvokeInterface_ kgcj_vm_fns = {
	KGCJ_VM_SLOTS(VSLOT_STUB)
	KGCJ_VM_IMPLEMENTED(VSLOT_IMPL)
};
#pragma GCC diagnostic pop
