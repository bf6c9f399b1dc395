/* SPDX-License-Identifier: MIT */
/*
 * mt_jni_sqlite: Debian's sqlite-jdbc natives (libxerial-sqlite-jdbc-jni,
 * jni/libsqlitejdbc.so), unmodified, on kgc. Host classes stand in for
 * sqlite-jdbc's Java half (JNI_OnLoad looks up its classes, fields and
 * methods and keeps them in weak global references); NativeDB keeps the
 * sqlite3 pointer in its long field. An in-memory database: create a
 * table, insert 200 rows with bound ints, strings (UTF-8 byte[]) and blobs
 * while another thread allocates and collects, select them back (text as
 * direct ByteBuffers, blobs as new byte[]) and check every row; bad SQL
 * makes the .so call back throwex(int) on the NativeDB: the host throws
 * org/sqlite/SQLiteException with sqlite's message, which kgc_native_call
 * returns as -EPROTO.
 */
#include <dlfcn.h>
#include "jni_test.h"

#define SQLITE_SO "/usr/lib/x86_64-linux-gnu/jni/libsqlitejdbc.so"
#define NDB "org/sqlite/core/NativeDB"
#define NROWS 200

static JNIEnv *env;
enum { S_DB, S_A, S_B, NSLOTS };
static kgc_obj slots[NSLOTS];

/* DB.throwex(int): throw newSQLException(code), its message from errmsg_utf8() */
static void throwex(JNIEnv *env, jobject self, const jvalue *a, jvalue *r, void *d)
{
	void *dl = dlopen(SQLITE_SO, RTLD_NOW | RTLD_NOLOAD);
	jobject (*errmsg)(JNIEnv *, jobject) =
		dl ? (jobject (*)(JNIEnv *, jobject))dlsym(dl, "Java_org_sqlite_core_NativeDB_errmsg_1utf8")
		   : NULL;
	jobject bb = errmsg ? errmsg(env, self) : NULL;
	char msg[512];

	snprintf(msg, sizeof(msg), "[SQLITE_ERROR] SQL error or missing database (%.*s)",
		 bb ? (int)(*env)->GetDirectBufferCapacity(env, bb) : 1,
		 bb ? (const char *)(*env)->GetDirectBufferAddress(env, bb) : "?");
	(*env)->ThrowNew(env, (*env)->FindClass(env, "org/sqlite/SQLiteException"), msg);
	if (dl)
		dlclose(dl);
}

/* NativeDB.throwex(String) (static) */
static void throwex_s(JNIEnv *env, jobject cls, const jvalue *a, jvalue *r, void *d)
{
	const char *m = (*env)->GetStringUTFChars(env, a[0].l, NULL);

	(*env)->ThrowNew(env, (*env)->FindClass(env, "org/sqlite/SQLiteException"), m);
	(*env)->ReleaseStringUTFChars(env, a[0].l, m);
}

#define F(n, s) { .name = (n), .sig = (s) }
#define M(n, s) { .name = (n), .sig = (s) }
static const struct kgc_jni_field_def ndb_f[] = {
	F("pointer", "J"), F("busyHandler", "J"), F("commitListener", "J"),
	F("updateListener", "J"), F("progressHandler", "J"),
};
static const struct kgc_jni_method_def db_m[] = {
	{ .name = "throwex", .sig = "(I)V", .fn = throwex },
	{ .name = "throwex", .sig = "()V", .fn = throwex },
	M("onUpdate", "(ILjava/lang/String;Ljava/lang/String;J)V"), M("onCommit", "(Z)V"),
};
static const struct kgc_jni_method_def ndb_m[] = {
	{ .name = "throwex", .sig = "(Ljava/lang/String;)V", .flags = KGC_JNI_STATIC, .fn = throwex_s },
	{ .name = "stringToUtf8ByteArray", .sig = "(Ljava/lang/String;)[B", .flags = KGC_JNI_STATIC },
};
static const struct kgc_jni_field_def fn_f[] = { F("context", "J"), F("value", "J"), F("args", "I") };
static const struct kgc_jni_method_def fn_m[] = { M("xFunc", "()V") };
static const struct kgc_jni_method_def agg_m[] = {
	M("xStep", "()V"), M("xFinal", "()V"), M("clone", "()Ljava/lang/Object;"),
};
static const struct kgc_jni_method_def win_m[] = { M("xInverse", "()V"), M("xValue", "()V") };
static const struct kgc_jni_method_def coll_m[] = {
	M("xCompare", "(Ljava/lang/String;Ljava/lang/String;)I"),
};
static const struct kgc_jni_method_def obs_m[] = { M("progress", "(II)V") };
static const struct kgc_jni_method_def prog_m[] = { M("progress", "()I") };
static const struct kgc_jni_method_def busy_m[] = { M("callback", "(I)I") };

static void define(const char *name, const char *super, const struct kgc_jni_field_def *f,
		   uint32_t nf, const struct kgc_jni_method_def *m, uint32_t nm)
{
	struct kgc_jni_class_def d = {
		.size = sizeof(d), .name = name, .super = super, .fields = f, .nfields = nf,
		.methods = m, .nmethods = nm,
	};

	if (kgc_jni_class_define(jt_vm, jt_t, &d))
		T_FAIL("define %s", name);
}

static void define_all(void)
{
	define("java/sql/SQLException", "java/lang/Exception", NULL, 0, NULL, 0);
	define("org/sqlite/SQLiteException", "java/sql/SQLException", NULL, 0, NULL, 0);
	define("org/sqlite/core/DB", NULL, NULL, 0, db_m, 4);
	define(NDB, "org/sqlite/core/DB", ndb_f, 5, ndb_m, 2);
	define("org/sqlite/Function", NULL, fn_f, 3, fn_m, 1);
	define("org/sqlite/Function$Aggregate", "org/sqlite/Function", NULL, 0, agg_m, 3);
	define("org/sqlite/Function$Window", "org/sqlite/Function$Aggregate", NULL, 0, win_m, 2);
	define("org/sqlite/Collation", NULL, NULL, 0, coll_m, 1);
	define("org/sqlite/core/DB$ProgressObserver", NULL, NULL, 0, obs_m, 1);
	define("org/sqlite/ProgressHandler", NULL, NULL, 0, prog_m, 1);
	define("org/sqlite/BusyHandler", NULL, NULL, 0, busy_m, 1);
}

/* A NUL-terminated UTF-8 byte[] into slots[s] (the Java half's stringToUtf8ByteArray). */
static kgc_obj utf8(int s, const char *str)
{
	size_t n = strlen(str);

	slots[s] = kgc_alloc_array(jt_t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE), n + 1);
	T_ASSERT(slots[s]);
	memcpy(kgc_array_data(slots[s]), str, n + 1);
	return slots[s];
}

static union kgc_value db_call(const char *name, const char *sig, const union kgc_value *a,
			       int *rc)
{
	union kgc_value r = { 0 };
	int c = kgc_native_call(jt_t, jt_method(NDB, name, sig, 0), slots[S_DB], a, &r);

	if (rc)
		*rc = c;
	else if (c)
		T_FAIL("NativeDB.%s%s: %d (%s: %s)", name, sig, c, jt_exc_class() ? jt_exc_class() : "-",
		       kgc_native_exception_message(jt_t) ? kgc_native_exception_message(jt_t) : "-");
	return r;
}

static void row(int i, char *name, size_t nsz, size_t *blen, unsigned long long *blob_seed)
{
	snprintf(name, nsz, "row %d: h\xc3\xa9llo %x", i, i * 2654435761u);
	*blen = (size_t)(i * 37 % 5000);
	*blob_seed = 1000 + (unsigned long long)i;
}

static void fill_blob(unsigned char *p, size_t n, unsigned long long s)
{
	for (size_t k = 0; k < n; k++)
		p[k] = (unsigned char)t_rand(&s);
}

static void insert_rows(void)
{
	int64_t st = db_call("prepare_utf8", "([B)J",
			     (union kgc_value[]){ { .l = utf8(S_A, "INSERT INTO t VALUES(?, ?, ?)") } },
			     NULL).j;

	T_ASSERT(st);
	for (int i = 0; i < NROWS; i++) {
		char name[64];
		size_t blen;
		unsigned long long bs;

		row(i, name, sizeof(name), &blen, &bs);
		T_ASSERT_EQ(db_call("bind_int", "(JII)I", (union kgc_value[]){ { .j = st }, { .i = 1 },
				    { .i = i } }, NULL).i, 0);
		utf8(S_A, name);
		/* the Java half passes the bytes without the NUL */
		slots[S_B] = kgc_alloc_array(jt_t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE), strlen(name));
		memcpy(kgc_array_data(slots[S_B]), name, strlen(name));
		T_ASSERT_EQ(db_call("bind_text_utf8", "(JI[B)I", (union kgc_value[]){ { .j = st },
				    { .i = 2 }, { .l = slots[S_B] } }, NULL).i, 0);
		slots[S_B] = kgc_alloc_array(jt_t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE), blen);
		fill_blob(kgc_array_data(slots[S_B]), blen, bs);
		T_ASSERT_EQ(db_call("bind_blob", "(JI[B)I", (union kgc_value[]){ { .j = st },
				    { .i = 3 }, { .l = slots[S_B] } }, NULL).i, 0);
		T_ASSERT_EQ(db_call("step", "(J)I", (union kgc_value[]){ { .j = st } }, NULL).i, 101);
		T_ASSERT_EQ(db_call("reset", "(J)I", (union kgc_value[]){ { .j = st } }, NULL).i, 0);
		T_ASSERT_EQ(db_call("clear_bindings", "(J)I", (union kgc_value[]){ { .j = st } },
				    NULL).i, 0);
		if (i % 50 == 25)
			jt_wait_gcs(1);	/* collections between the calls */
	}
	T_ASSERT_EQ(db_call("finalize", "(J)I", (union kgc_value[]){ { .j = st } }, NULL).i, 0);
}

static void select_rows(void)
{
	int64_t st = db_call("prepare_utf8", "([B)J", (union kgc_value[]){ { .l = utf8(S_A,
			     "SELECT id, name, data FROM t ORDER BY id") } }, NULL).j;
	int n = 0, rc;

	while ((rc = db_call("step", "(J)I", (union kgc_value[]){ { .j = st } }, NULL).i) == 100) {
		char name[64];
		size_t blen;
		unsigned long long bs;
		unsigned char *want;
		union kgc_value r;
		jobject h;

		row(n, name, sizeof(name), &blen, &bs);
		T_ASSERT_EQ(db_call("column_int", "(JI)I", (union kgc_value[]){ { .j = st },
				    { .i = 0 } }, NULL).i, n);
		r = db_call("column_text_utf8", "(JI)Ljava/nio/ByteBuffer;",
			    (union kgc_value[]){ { .j = st }, { .i = 1 } }, NULL);
		slots[S_A] = r.l;
		h = (jobject)&slots[S_A];
		if ((*env)->GetDirectBufferCapacity(env, h) != (jlong)strlen(name) ||
		    memcmp((*env)->GetDirectBufferAddress(env, h), name, strlen(name)))
			T_FAIL("row %d: name differs", n);
		r = db_call("column_blob", "(JI)[B", (union kgc_value[]){ { .j = st }, { .i = 2 } },
			    NULL);
		slots[S_B] = r.l;
		want = malloc(blen + 1);
		fill_blob(want, blen, bs);
		if (blen && (!slots[S_B] || kgc_array_length(slots[S_B]) != blen ||
			     memcmp(kgc_array_data(slots[S_B]), want, blen)))
			T_FAIL("row %d: blob of %zu bytes differs", n, blen);
		free(want);
		if (n % 50 == 25)
			jt_wait_gcs(1);
		n++;
	}
	T_ASSERT_EQ(rc, 101);
	T_ASSERT_EQ(n, NROWS);
	T_ASSERT_EQ(db_call("finalize", "(J)I", (union kgc_value[]){ { .j = st } }, NULL).i, 0);
	printf("%d rows selected back, each checked\n", n);
}

int main(void)
{
	unsigned long long seed = t_seed();
	struct kgc_frame f;
	pthread_t gc;
	int rc;

	jt_need(SQLITE_SO, "libxerial-sqlite-jdbc-jni");
	jt_setup(256u << 20, 4u << 20);
	define_all();
	rc = kgc_jni_load_library(jt_vm, jt_t, SQLITE_SO);
	if (rc)
		T_FAIL("load: %d", rc);
	T_ASSERT_EQ(kgc_jni_env(jt_vm, jt_t, &env), 0);
	kgc_frame_push(jt_t, &f, slots, NSLOTS, NULL);
	T_ASSERT_EQ((*env)->PushLocalFrame(env, 2), 0);
	slots[S_DB] = *(kgc_obj *)(*env)->AllocObject(env, (*env)->FindClass(env, NDB));
	(*env)->PopLocalFrame(env, NULL);

	db_call("_open_utf8", "([BI)V", (union kgc_value[]){ { .l = utf8(S_A, ":memory:") },
		{ .i = 6 } }, NULL);
	T_ASSERT((*env)->GetLongField(env, (jobject)&slots[S_DB], (*env)->GetFieldID(env,
				      (*env)->FindClass(env, NDB), "pointer", "J")));
	T_ASSERT_EQ(db_call("_exec_utf8", "([B)I", (union kgc_value[]){ { .l = utf8(S_A,
			    "CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, data BLOB)") } },
			    NULL).i, 0);
	T_ASSERT_EQ(pthread_create(&gc, NULL, jt_gc_thread, (void *)(uintptr_t)(seed + 1)), 0);
	insert_rows();
	select_rows();

	/* bad SQL: the .so calls throwex(int) on the NativeDB */
	db_call("prepare_utf8", "([B)J", (union kgc_value[]){ { .l = utf8(S_A, "SELEKT 1") } }, &rc);
	T_ASSERT_EQ(rc, -EPROTO);
	T_ASSERT(!strcmp(jt_exc_class(), "org/sqlite/SQLiteException"));
	printf("bad SQL: %s: %s\n", jt_exc_class(), kgc_native_exception_message(jt_t));
	T_ASSERT(strstr(kgc_native_exception_message(jt_t), "near \"SELEKT\": syntax error"));
	kgc_native_exception_clear(jt_t);

	atomic_store(&jt_stop, 1);
	kgc_enter_native(jt_t);
	pthread_join(gc, NULL);
	kgc_leave_native(jt_t);
	printf("GC thread: %d collections\n", atomic_load(&jt_gcs));
	db_call("_close", "()V", NULL, NULL);
	kgc_frame_pop(jt_t, &f);
	jt_teardown();
	printf("mt_jni_sqlite: ok\n");
	return 0;
}
