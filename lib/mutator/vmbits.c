/* SPDX-License-Identifier: MIT */
/*
 * vmbits.c - the runtime's header bits (kgc_obj_vm_bits_*): bits 56-63 of
 * each object's header word, which no collector code reads or writes and
 * every copy keeps. Calls run in managed state, so no pause changes the
 * header word meanwhile; other mutators may, through these calls: every
 * change is a CAS on the whole word.
 */
#include <errno.h>
#include "gc_internal.h"

#define VM_MASK	((1u << KGC_VM_BITS) - 1)

static inline uint32_t vm_of(uint64_t hd) { return (uint32_t)(hd >> HDR_VM_SHIFT) & VM_MASK; }

/* o is an object the calling (managed) thread may change the bits of: 0 or -errno. */
int kgci_obj_arg_check(struct kgc_thread *t, kgc_obj o, const char *what)
{
	struct kgc_heap *h;
	struct region *r;
	uint64_t hd;

	if (!kgci_thread_check_managed(t, what))
		return -EPERM;
	h = t->heap;
	if (!o || ((uintptr_t)o & 7) || !in_heap(h, o)) {
		kgci_err_set(EINVAL, "%s: thread '%s': %p is %s", what, t->name, (void *)o,
			     !o ? "NULL" : ((uintptr_t)o & h->opt.tag_mask) ? "a tagged immediate, not an object"
			     : "not a heap object");
		return -EINVAL;
	}
	if (!t->pub.checked)
		return 0;
	r = region_of(h, o);
	hd = __atomic_load_n(obj_hdr(o), __ATOMIC_RELAXED);
	/* not r->top: another thread's allocation moves it (under h->lock);
	 * unallocated memory reads as header 0, which is no valid type */
	if (r->type == RT_FREE || r->type == RT_HUM_CONT || (hd & HDR_TAG_MASK) ||
	    hdr_kind(hd) == KIND_FILLER || !kgci_type_valid(h, hdr_type(hd)))
		kgci_fatal("%s: thread '%s': %p is not a live object's start (header %#llx, region %u %s): "
			   "a stale or interior pointer", what, t->name, (void *)o, (unsigned long long)hd,
			   region_index(h, o), kgci_region_type_name(r->type));
	return 0;
}

static int vm_bad_bits(struct kgc_thread *t, const char *what, uint32_t a, uint32_t b)
{
	if (!((a | b) & ~VM_MASK))
		return 0;
	kgci_err_set(EINVAL, "%s: thread '%s': bits %#x/%#x beyond the %d VM header bits", what, t->name,
		     a, b, KGC_VM_BITS);
	return -EINVAL;
}

KGC_API int kgc_obj_vm_bits_get(kgc_thread *t, kgc_obj o, uint32_t *bits)
{
	int err = kgci_obj_arg_check(t, o, "kgc_obj_vm_bits_get");

	if (err)
		return err;
	if (!bits) {
		kgci_err_set(EINVAL, "kgc_obj_vm_bits_get: bits is NULL");
		return -EINVAL;
	}
	*bits = vm_of(__atomic_load_n(obj_hdr(o), __ATOMIC_ACQUIRE));
	return 0;
}

KGC_API int kgc_obj_vm_bits_cas(kgc_thread *t, kgc_obj o, uint32_t *expected, uint32_t desired)
{
	int err = kgci_obj_arg_check(t, o, "kgc_obj_vm_bits_cas");
	uint64_t hd;

	if (err)
		return err;
	if (!expected) {
		kgci_err_set(EINVAL, "kgc_obj_vm_bits_cas: expected is NULL");
		return -EINVAL;
	}
	if ((err = vm_bad_bits(t, "kgc_obj_vm_bits_cas", *expected, desired)))
		return err;
	hd = __atomic_load_n(obj_hdr(o), __ATOMIC_ACQUIRE);
	/* retried only while the bits match: another thread's CAS changed them, or nothing did */
	while (vm_of(hd) == *expected) {
		uint64_t nv = (hd & ~((uint64_t)VM_MASK << HDR_VM_SHIFT)) | (uint64_t)desired << HDR_VM_SHIFT;

		if (__atomic_compare_exchange_n(obj_hdr(o), &hd, nv, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			return 0;
	}
	*expected = vm_of(hd);
	return -EAGAIN;
}

KGC_API int kgc_obj_vm_bits_update(kgc_thread *t, kgc_obj o, uint32_t clear, uint32_t set, uint32_t *old)
{
	int err = kgci_obj_arg_check(t, o, "kgc_obj_vm_bits_update");
	uint64_t hd, nv;

	if (err || (err = vm_bad_bits(t, "kgc_obj_vm_bits_update", clear, set)))
		return err;
	hd = __atomic_load_n(obj_hdr(o), __ATOMIC_ACQUIRE);
	do {
		uint32_t bits = (vm_of(hd) & ~clear) | set;

		nv = (hd & ~((uint64_t)VM_MASK << HDR_VM_SHIFT)) | (uint64_t)bits << HDR_VM_SHIFT;
	} while (!__atomic_compare_exchange_n(obj_hdr(o), &hd, nv, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE));
	if (old)
		*old = vm_of(hd);
	return 0;
}
