/* SPDX-License-Identifier: MIT */
/*
 * jni_impl.h - which JNI functions libkgc-jni implements (kgcj_<Name>, in
 * the file of their concern). jni_table.c puts each into its slot; every
 * other slot of the table gets a stub that aborts naming the function.
 */
#ifndef KGCJ_IMPL_H
#define KGCJ_IMPL_H

/* The primitive types: X(Name, jtype, jvalue member, enum kgc_prim, descriptor char) */
#define KGCJ_PRIMS(X) \
	X(Boolean, jboolean, z, KGC_PRIM_BOOLEAN, 'Z') \
	X(Byte, jbyte, b, KGC_PRIM_BYTE, 'B') \
	X(Char, jchar, c, KGC_PRIM_CHAR, 'C') \
	X(Short, jshort, s, KGC_PRIM_SHORT, 'S') \
	X(Int, jint, i, KGC_PRIM_INT, 'I') \
	X(Long, jlong, j, KGC_PRIM_LONG, 'J') \
	X(Float, jfloat, f, KGC_PRIM_FLOAT, 'F') \
	X(Double, jdouble, d, KGC_PRIM_DOUBLE, 'D')

/* Call and field types: the primitives and Object (and Void for calls) */
#define KGCJ_VALUE_TYPES(X) \
	X(Object, jobject, l, -1, 'L') \
	KGCJ_PRIMS(X)

#define KGCJ_CALL_FNS(X, N) X(Call##N##Method) X(Call##N##MethodV) X(Call##N##MethodA) \
	X(CallNonvirtual##N##Method) X(CallNonvirtual##N##MethodV) X(CallNonvirtual##N##MethodA) \
	X(CallStatic##N##Method) X(CallStatic##N##MethodV) X(CallStatic##N##MethodA)

#define KGCJ_IMPLEMENTED(X) \
	X(GetVersion) X(GetJavaVM) \
	/* jni_host.c */ \
	X(FindClass) X(GetSuperclass) X(IsAssignableFrom) X(GetObjectClass) X(IsInstanceOf) \
	X(GetMethodID) X(GetStaticMethodID) X(GetFieldID) X(GetStaticFieldID) \
	/* jni_exc.c */ \
	X(Throw) X(ThrowNew) X(ExceptionOccurred) X(ExceptionDescribe) X(ExceptionClear) \
	X(FatalError) X(ExceptionCheck) \
	/* jni_refs.c */ \
	X(PushLocalFrame) X(PopLocalFrame) X(NewGlobalRef) X(DeleteGlobalRef) X(DeleteLocalRef) \
	X(IsSameObject) X(NewLocalRef) X(EnsureLocalCapacity) X(NewWeakGlobalRef) \
	X(DeleteWeakGlobalRef) X(GetObjectRefType) \
	/* jni_calls.c */ \
	X(AllocObject) X(NewObject) X(NewObjectV) X(NewObjectA) \
	KGCJ_CALL_FNS(X, Void) KGCJ_VALUE_TYPES_CALLS(X) \
	/* jni_calls.c: fields */ \
	KGCJ_VALUE_TYPES_FIELDS(X) \
	/* jni_strings.c */ \
	X(NewString) X(GetStringLength) X(GetStringChars) X(ReleaseStringChars) X(NewStringUTF) \
	X(GetStringUTFLength) X(GetStringUTFChars) X(ReleaseStringUTFChars) X(GetStringRegion) \
	X(GetStringUTFRegion) X(GetStringCritical) X(ReleaseStringCritical) \
	/* jni_arrays.c */ \
	X(GetArrayLength) X(NewObjectArray) X(GetObjectArrayElement) X(SetObjectArrayElement) \
	KGCJ_PRIMS_ARRAYS(X) X(GetPrimitiveArrayCritical) X(ReleasePrimitiveArrayCritical) \
	/* jni_loader.c */ \
	X(RegisterNatives) X(UnregisterNatives) \
	/* jni_monitor.c */ \
	X(MonitorEnter) X(MonitorExit) \
	/* jni_nio.c */ \
	X(NewDirectByteBuffer) X(GetDirectBufferAddress) X(GetDirectBufferCapacity) \
	/* jni_reflect.c */ \
	X(DefineClass) X(FromReflectedMethod) X(FromReflectedField) X(ToReflectedMethod) \
	X(ToReflectedField) X(GetModule)

/* the families, expanded with the caller's X */
#define KGCJ_VALUE_TYPES_CALLS(X) \
	KGCJ_CALL_FNS(X, Object) KGCJ_CALL_FNS(X, Boolean) KGCJ_CALL_FNS(X, Byte) \
	KGCJ_CALL_FNS(X, Char) KGCJ_CALL_FNS(X, Short) KGCJ_CALL_FNS(X, Int) \
	KGCJ_CALL_FNS(X, Long) KGCJ_CALL_FNS(X, Float) KGCJ_CALL_FNS(X, Double)
#define KGCJ_VALUE_TYPES_FIELDS(X) \
	KGCJ_FIELD_FNS_(X, Object) KGCJ_FIELD_FNS_(X, Boolean) KGCJ_FIELD_FNS_(X, Byte) \
	KGCJ_FIELD_FNS_(X, Char) KGCJ_FIELD_FNS_(X, Short) KGCJ_FIELD_FNS_(X, Int) \
	KGCJ_FIELD_FNS_(X, Long) KGCJ_FIELD_FNS_(X, Float) KGCJ_FIELD_FNS_(X, Double)
#define KGCJ_FIELD_FNS_(X, N) X(Get##N##Field) X(Set##N##Field) X(GetStatic##N##Field) \
	X(SetStatic##N##Field)
#define KGCJ_PRIMS_ARRAYS(X) \
	KGCJ_ARRAY_FNS_(X, Boolean) KGCJ_ARRAY_FNS_(X, Byte) KGCJ_ARRAY_FNS_(X, Char) \
	KGCJ_ARRAY_FNS_(X, Short) KGCJ_ARRAY_FNS_(X, Int) KGCJ_ARRAY_FNS_(X, Long) \
	KGCJ_ARRAY_FNS_(X, Float) KGCJ_ARRAY_FNS_(X, Double)
#define KGCJ_ARRAY_FNS_(X, N) X(New##N##Array) X(Get##N##ArrayElements) \
	X(Release##N##ArrayElements) X(Get##N##ArrayRegion) X(Set##N##ArrayRegion)

#define KGCJ_VM_IMPLEMENTED(X) \
	X(DestroyJavaVM) X(AttachCurrentThread) X(DetachCurrentThread) X(GetEnv) \
	X(AttachCurrentThreadAsDaemon)

#endif
