/* SPDX-License-Identifier: MIT */
/*
 * Objects through the regular path: the receiver and object arguments arrive
 * as handles, null as NULL; the env reads/writes fields, allocates (local
 * refs beyond the 16 preallocated ones), makes global refs; object results
 * are unwrapped; a null receiver is refused.
 */
#include "native_test.h"

#define OFF_X 8		/* int32 */
#define OFF_Y 12	/* int32 */
#define OFF_NEXT 16	/* ref */
#define OFF_D 24	/* double */

static kgc_type_id point;
static kgc_jobject saved_global;

/* instance: this.x + other.y (+1000 if other is null) */
static int32_t n_dot(kgc_env *env, kgc_jobject self, kgc_jobject other)
{
	union kgc_value x, y;

	if ((*env)->GetField(env, self, OFF_X, 'I', &x))
		return -1;
	if (!other)
		return x.i + 1000;
	if ((*env)->GetField(env, other, OFF_Y, 'I', &y))
		return -2;
	return x.i + y.i;
}

/* static: builds a chain of n points (n > 16 local refs), links them through
 * next, returns the head; also keeps the last one in a global ref */
static kgc_jobject n_chain(kgc_env *env, kgc_jclass cls, int32_t n)
{
	kgc_jobject prev = NULL, head = NULL;

	if (strcmp((*env)->GetClassName(env, cls), "kgc/test/Obj"))
		return NULL;
	for (int32_t i = 0; i < n; i++) {
		kgc_jobject p = (*env)->AllocObject(env, point);
		union kgc_value v = { .i = i };

		if (!p)
			return NULL;
		(*env)->SetField(env, p, OFF_X, 'I', v);
		v.d = i * 0.5;
		(*env)->SetField(env, p, OFF_D, 'D', v);
		if (prev)
			(*env)->SetObjectField(env, prev, OFF_NEXT, p);
		else
			head = p;
		prev = p;
	}
	saved_global = (*env)->NewGlobalRef(env, prev);
	return head;
}

/* instance: walks this.next chain through GetObjectField, sums x */
static int64_t n_walk(kgc_env *env, kgc_jobject self)
{
	int64_t s = 0;
	kgc_jobject p = self;

	while (p) {
		union kgc_value x;
		kgc_jobject q;

		(*env)->GetField(env, p, OFF_X, 'I', &x);
		s += x.i;
		q = (*env)->GetObjectField(env, p, OFF_NEXT);
		if (p != self)
			(*env)->DeleteLocalRef(env, p);
		p = q;
	}
	return s;
}

/* misuse is reported, not crashing: bad offsets, wrong array types */
static int32_t n_misuse(kgc_env *env, kgc_jclass cls, kgc_jobject obj, kgc_jobject arr)
{
	union kgc_value v;
	int32_t buf[4];
	int32_t bad = 0;

	bad += (*env)->GetField(env, obj, 4, 'I', &v) == -EINVAL;		/* in header */
	bad += (*env)->GetField(env, obj, 4096, 'I', &v) == -EINVAL;		/* past end */
	bad += (*env)->GetField(env, obj, OFF_X, 'Q', &v) == -EINVAL;		/* bad type */
	bad += (*env)->GetField(env, NULL, OFF_X, 'I', &v) == -EINVAL;
	bad += (*env)->GetArrayRegion(env, arr, 'J', 0, 1, buf) == -EINVAL;	/* int[] as long */
	bad += (*env)->GetArrayRegion(env, arr, 'I', 3, 2, buf) == -ERANGE;	/* 3+2 > 4 */
	bad += (*env)->SetArrayRegion(env, arr, 'I', 0, 4, (int32_t[]){ 1, 2, 3, 4 }) == 0;
	bad += (*env)->GetObjectType(env, arr) == KGC_TYPE_PRIM_ARRAY(KGC_PRIM_INT);
	bad += (*env)->IsSameObject(env, obj, obj) && !(*env)->IsSameObject(env, obj, arr);
	{
		kgc_jobject ra = (*env)->NewArray(env, KGC_TYPE_REF_ARRAY, 3);
		kgc_jobject e;

		bad += (*env)->SetObjectArrayElement(env, ra, 1, obj) == 0;
		e = (*env)->GetObjectArrayElement(env, ra, 1);
		bad += (*env)->IsSameObject(env, e, obj);
		bad += (*env)->GetObjectArrayElement(env, ra, 3) == NULL;		/* out of range */
		bad += (*env)->GetObjectArrayElement(env, arr, 0) == NULL;	/* not a ref array */
	}
	return bad;
}

static void *n_thread_of(kgc_env *env, kgc_jclass cls)
{
	return (*env)->GetThread(env);
}

int main(void)
{
	struct kgc_type_desc d = { .name = "Point", .payload_size = 24, .nrefs = 1,
				   .ref_offsets = (const uint32_t[]){ OFF_NEXT } };
	union kgc_value a[2], r;
	struct kgc_frame f;
	kgc_obj slots[2];
	kgc_method *dot, *chain, *walk, *misuse;

	nt_setup();
	T_ASSERT_EQ(kgc_type_register(nt_heap, &d, &point), 0);
	dot = nt_reg("kgc/test/Point", "dot", "(Lkgc/test/Point;)I", n_dot, 0);
	walk = nt_reg("kgc/test/Point", "walk", "()J", n_walk, 0);
	chain = nt_reg("kgc/test/Obj", "chain", "(I)Lkgc/test/Point;", n_chain, KGC_NATIVE_STATIC);
	misuse = nt_reg("kgc/test/Obj", "misuse", "(Ljava/lang/Object;[I)I", n_misuse,
			KGC_NATIVE_STATIC);

	kgc_frame_push(nt_thread, &f, slots, 2, NULL);
	slots[0] = kgc_alloc(nt_thread, point);
	slots[1] = kgc_alloc(nt_thread, point);
	T_ASSERT(slots[0] && slots[1]);
	KGC_FIELD(slots[0], OFF_X, int32_t) = 40;
	KGC_FIELD(slots[1], OFF_Y, int32_t) = 2;

	a[0].l = slots[1];
	T_ASSERT_EQ(kgc_native_call(nt_thread, dot, slots[0], a, &r), 0);
	T_ASSERT_EQ(r.i, 42);
	a[0].l = NULL;
	T_ASSERT_EQ(kgc_native_call(nt_thread, dot, slots[0], a, &r), 0);
	T_ASSERT_EQ(r.i, 1040);
	T_ASSERT_EQ(kgc_native_call(nt_thread, dot, NULL, a, &r), -EINVAL);
	T_ASSERT_STR_HAS(kgc_last_error(), "null receiver");

	/* 100 local refs: beyond the 16 on the stack, spilled to chunk frames */
	a[0].i = 100;
	T_ASSERT_EQ(kgc_native_call(nt_thread, chain, NULL, a, &r), 0);
	T_ASSERT(r.l != NULL);
	T_ASSERT_EQ(kgc_obj_type(r.l), point);
	slots[0] = r.l;
	T_ASSERT_EQ(kgc_native_call(nt_thread, walk, slots[0], NULL, &r), 0);
	T_ASSERT_EQ(r.j, 99 * 100 / 2);
	/* the global ref outlives the call and survives a collection */
	T_ASSERT(saved_global != NULL);
	T_ASSERT_EQ(kgc_collect(nt_thread, KGC_GC_FULL), 0);
	T_ASSERT_EQ(KGC_FIELD(kgc_handle_get((kgc_handle)saved_global), OFF_X, int32_t), 99);
	T_ASSERT(KGC_FIELD(kgc_handle_get((kgc_handle)saved_global), OFF_D, double) == 49.5);
	kgc_handle_free(nt_thread, (kgc_handle)saved_global);
	T_ASSERT_EQ(kgc_native_call(nt_thread, walk, slots[0], NULL, &r), 0);
	T_ASSERT_EQ(r.j, 99 * 100 / 2);

	/* env misuse is reported through return values */
	slots[1] = kgc_alloc_array(nt_thread, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_INT), 4);
	a[0].l = slots[0];
	a[1].l = slots[1];
	T_ASSERT_EQ(kgc_native_call(nt_thread, misuse, NULL, a, &r), 0);
	T_ASSERT_EQ(r.i, 13);
	T_ASSERT_EQ(((int32_t *)kgc_array_data(slots[1]))[3], 4);

	/* the env knows its thread */
	T_ASSERT_EQ(kgc_native_register(nt_heap, "kgc/test/Obj",
		(struct kgc_native_method[]){ { "self", "()J", n_thread_of, KGC_NATIVE_STATIC } }, 1), 0);
	T_ASSERT_EQ(kgc_native_method_find(nt_heap, "kgc/test/Obj", "self", "()J",
					   KGC_NATIVE_STATIC, &chain), 0);
	T_ASSERT_EQ(kgc_native_call(nt_thread, chain, NULL, NULL, &r), 0);
	T_ASSERT(r.j == (int64_t)(intptr_t)nt_thread);

	T_ASSERT_EQ(kgc_frame_pop(nt_thread, &f), 0);
	nt_teardown();
	puts("ok");
	return 0;
}
