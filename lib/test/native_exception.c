/* SPDX-License-Identifier: MIT */
/*
 * Exceptions raised by natives through the env are reported by
 * kgc_native_call (-EPROTO) with the exception object (and ThrowNew's
 * message) fetchable and clearable; one checked and cleared inside the
 * native is not reported; a pending exception survives a collection.
 */
#include "native_test.h"

static kgc_type_id exc_type;

static int32_t n_thrownew(kgc_env *env, kgc_jclass c, int32_t v)
{
	if ((*env)->ThrowNew(env, exc_type, "value out of range"))
		return -1;
	return (*env)->ExceptionCheck(env) ? v : -2;
}

static void n_throw(kgc_env *env, kgc_jclass c, kgc_jobject e)
{
	(*env)->Throw(env, e);
}

static int32_t n_caught(kgc_env *env, kgc_jclass c)
{
	kgc_jobject e;
	int32_t ok;

	(*env)->ThrowNew(env, exc_type, "handled");
	e = (*env)->ExceptionOccurred(env);
	ok = e && (*env)->GetObjectType(env, e) == exc_type;
	(*env)->ExceptionClear(env);
	return ok && !(*env)->ExceptionCheck(env) && !(*env)->ExceptionOccurred(env);
}

int main(void)
{
	struct kgc_type_desc d = { .name = "IllegalArgumentException", .payload_size = 8 };
	union kgc_value a[1], r;
	kgc_method *tn, *th, *ca;
	kgc_obj e;

	nt_setup();
	T_ASSERT_EQ(kgc_type_register(nt_heap, &d, &exc_type), 0);
	tn = nt_reg("kgc/test/Exc", "thrownew", "(I)I", n_thrownew, KGC_NATIVE_STATIC);
	th = nt_reg("kgc/test/Exc", "throw", "(Ljava/lang/Throwable;)V", n_throw, KGC_NATIVE_STATIC);
	ca = nt_reg("kgc/test/Exc", "caught", "()Z", n_caught, KGC_NATIVE_STATIC);

	T_ASSERT(kgc_native_exception(nt_thread) == NULL);
	a[0].i = 7;
	T_ASSERT_EQ(kgc_native_call(nt_thread, tn, NULL, a, &r), -EPROTO);
	e = kgc_native_exception(nt_thread);
	T_ASSERT(e != NULL);
	T_ASSERT_EQ(kgc_obj_type(e), exc_type);
	T_ASSERT(!strcmp(kgc_native_exception_message(nt_thread), "value out of range"));
	/* the pending exception is a root: it survives collections */
	T_ASSERT_EQ(kgc_collect(nt_thread, KGC_GC_YOUNG), 0);
	T_ASSERT_EQ(kgc_collect(nt_thread, KGC_GC_FULL), 0);
	e = kgc_native_exception(nt_thread);
	T_ASSERT(e != NULL);
	T_ASSERT_EQ(kgc_obj_type(e), exc_type);
	kgc_native_exception_clear(nt_thread);
	T_ASSERT(kgc_native_exception(nt_thread) == NULL);
	T_ASSERT(kgc_native_exception_message(nt_thread) == NULL);

	/* Throw of an existing object: the same object comes back */
	{
		struct kgc_frame f;
		kgc_obj s[1];

		kgc_frame_push(nt_thread, &f, s, 1, NULL);
		s[0] = kgc_alloc(nt_thread, exc_type);
		KGC_FIELD(s[0], 8, int64_t) = 0x1234;
		a[0].l = s[0];
		T_ASSERT_EQ(kgc_native_call(nt_thread, th, NULL, a, NULL), -EPROTO);
		T_ASSERT(kgc_native_exception(nt_thread) == s[0]);
		T_ASSERT(kgc_native_exception_message(nt_thread) == NULL);
		T_ASSERT_EQ(KGC_FIELD(kgc_native_exception(nt_thread), 8, int64_t), 0x1234);
		/* a second exception replaces the first */
		a[0].i = 1;
		T_ASSERT_EQ(kgc_native_call(nt_thread, tn, NULL, a, &r), -EPROTO);
		T_ASSERT(kgc_native_exception(nt_thread) != s[0]);
		kgc_native_exception_clear(nt_thread);
		T_ASSERT_EQ(kgc_frame_pop(nt_thread, &f), 0);
	}

	/* checked and cleared inside: not reported */
	T_ASSERT_EQ(kgc_native_call(nt_thread, ca, NULL, NULL, &r), 0);
	T_ASSERT_EQ(r.z, 1);
	T_ASSERT(kgc_native_exception(nt_thread) == NULL);
	nt_teardown();
	puts("ok");
	return 0;
}
