/* SPDX-License-Identifier: MIT */
/*
 * jni_host.c - the default host: the registry of classes a C program
 * defines (kgc_jni_class_define) and the core classes, their fields and
 * C-implemented methods; FindClass, GetObjectClass, IsInstanceOf, the
 * method and field IDs. A class's instances are a kgc type (its fields
 * after its superclass's); its java/lang/Class object (the mirror) holds a
 * pointer to it and is rooted by a handle: a jclass is that handle, valid
 * for the VM's life (natives that keep FindClass's result in a static, as
 * lz4-java does, keep working).
 *
 * Classes are only added: readers walk the list and the type table
 * lock-free (release/acquire); writers take vm->lock, never across an
 * allocation.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "jni_internal.h"

#define MAX_TYPES 4096

/* -------------------------------------------------------- descriptors */

/* Length of the field descriptor at s, or 0 if malformed. */
static size_t field_desc_len(const char *s)
{
	size_t n = 0;

	while (s[n] == '[')
		n++;
	switch (s[n]) {
	case 'Z': case 'B': case 'C': case 'S': case 'I': case 'J': case 'F': case 'D':
		return n + 1;
	case 'L': {
		const char *e = strchr(s + n, ';');

		return e && e > s + n + 1 ? (size_t)(e - s) + 1 : 0;
	}
	default:
		return 0;
	}
}

static char type_char(const char *desc)
{
	return desc[0] == '[' ? 'L' : desc[0];
}

/* Parses "(args)ret" into m->args / m->nargs / m->ret. -EINVAL if bad. */
static int method_desc_parse(struct kgcj_method *m)
{
	const char *s = m->sig;
	size_t n;
	char buf[256];
	uint16_t k = 0;

	if (*s++ != '(')
		return -EINVAL;
	while (*s != ')') {
		n = field_desc_len(s);
		if (!n || k == sizeof(buf))
			return -EINVAL;
		buf[k++] = type_char(s);
		s += n;
	}
	s++;
	if (*s == 'V' && !s[1]) {
		m->ret = 'V';
	} else {
		n = field_desc_len(s);
		if (!n || s[n])
			return -EINVAL;
		m->ret = type_char(s);
	}
	m->args = malloc(k + 1);
	if (!m->args)
		return -ENOMEM;
	memcpy(m->args, buf, k);
	m->args[k] = 0;
	m->nargs = k;
	return 0;
}

static size_t type_size(char t)
{
	switch (t) {
	case 'Z': case 'B': return 1;
	case 'C': case 'S': return 2;
	case 'I': case 'F': return 4;
	default: return 8;	/* J D L */
	}
}

/* ---------------------------------------------------------------- lookup */

struct kgcj_class *kgcj_class_find(struct kgcj_vm *vm, const char *name)
{
	struct kgcj_class *c = __atomic_load_n(&vm->classes, __ATOMIC_ACQUIRE);

	for (; c; c = c->next)
		if (!strcmp(c->name, name))
			return c;
	return NULL;
}

struct kgcj_class *kgcj_class_load(struct kgcj_vm *vm, kgc_thread *t, const char *name)
{
	struct kgcj_class *c = kgcj_class_find(vm, name);

	if (c || !vm->host.load_class || vm->host.load_class(vm->host_ctx, (JavaVM *)vm, t, name))
		return c;
	return kgcj_class_find(vm, name);
}

KGC_API int kgc_jni_set_host(JavaVM *jvm, const struct kgc_jni_host *host, void *ctx)
{
	struct kgcj_vm *vm = VM(jvm);

	if (!vm || !host || host->size != sizeof(*host) || host->reserved0 || host->reserved[0]) {
		kgcj_error("kgc_jni_set_host: NULL vm or host, size %u (want %zu) or reserved not "
			   "zero", host ? host->size : 0, sizeof(*host));
		return -EINVAL;
	}
	vm->host = *host;
	vm->host_ctx = ctx;
	return 0;
}

struct kgcj_class *kgcj_class_of_obj(struct kgcj_vm *vm, kgc_obj o)
{
	kgc_type_id ty = kgc_obj_type(o);

	if (ty == vm->mirror_type)
		return vm->c_class;
	return ty < vm->ntypes ? __atomic_load_n(&vm->by_type[ty], __ATOMIC_ACQUIRE) : NULL;
}

static struct kgcj_class *mirror_class(kgc_obj m)
{
	return KGC_FIELD(m, KGC_HEADER_SIZE, struct kgcj_class *);
}

/* The class a java/lang/Class object m holds, or NULL if m is no mirror. */
struct kgcj_class *kgcj_class_of_mirror(struct kgcj_vm *vm, kgc_obj m)
{
	return m && kgc_obj_type(m) == vm->mirror_type ? mirror_class(m) : NULL;
}

/* managed state */
struct kgcj_class *kgcj_class_of_ref(struct kgcj_env *e, jclass c, const char *fn)
{
	kgc_obj o = kgcj_deref(e, c, fn);

	if (!o) {
		if (e->vm->checked)
			kgcj_fatal(fn, "null class");
		return NULL;
	}
	if (kgc_obj_type(o) != e->vm->mirror_type) {
		if (e->vm->checked)
			kgcj_fatal(fn, "%p is not a class (an instance of %s)", (void *)c,
				   kgc_jni_class_name((JavaVM *)e->vm, o));
		return NULL;
	}
	return mirror_class(o);
}

bool kgcj_subclass(const struct kgcj_class *c, const struct kgcj_class *of)
{
	for (; c; c = c->super)
		if (c == of)
			return true;
	return false;
}

struct kgcj_field *kgcj_field_find(struct kgcj_class *c, const char *name, const char *sig,
				   bool is_static)
{
	for (; c; c = c->super)
		for (struct kgcj_field *f = c->fields; f; f = f->next)
			if (f->is_static == is_static && !strcmp(f->name, name) &&
			    !strcmp(f->sig, sig))
				return f;
	return NULL;
}

struct kgcj_method *kgcj_method_find(struct kgcj_class *c, const char *name, const char *sig,
				     bool is_static)
{
	for (; c; c = c->super)
		for (struct kgcj_method *m = c->methods; m; m = m->next)
			if (!!(m->flags & KGC_JNI_STATIC) == is_static && !strcmp(m->name, name) &&
			    !strcmp(m->sig, sig))
				return m;
	return NULL;
}

KGC_API const char *kgc_jni_class_name(JavaVM *jvm, kgc_obj o)
{
	struct kgcj_class *c = jvm && o ? kgcj_class_of_obj(VM(jvm), o) : NULL;

	return c ? c->name : NULL;
}

/* -------------------------------------------------------------- defining */

static void class_free(struct kgcj_class *c, kgc_thread *t)
{
	while (c->fields) {
		struct kgcj_field *f = c->fields;

		c->fields = f->next;
		if (f->sref)
			kgc_handle_free(t, f->sref);
		free(f->name);
		free(f->sig);
		free(f);
	}
	while (c->methods) {
		struct kgcj_method *m = c->methods;

		c->methods = m->next;
		free(m->name);
		free(m->sig);
		free(m->args);
		free(m);
	}
	if (c->mirror)
		kgc_handle_free(t, c->mirror);
	free(c->name);
	free(c);
}

static int fields_add(struct kgcj_class *c, kgc_thread *t, const struct kgc_jni_field_def *fd,
		      uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		struct kgcj_field *f;
		size_t len = fd[i].name && fd[i].sig ? field_desc_len(fd[i].sig) : 0;
		size_t sz;

		if (!len || fd[i].sig[len] || (fd[i].flags & ~KGC_JNI_STATIC) || fd[i].reserved) {
			kgcj_error("kgc_jni_class_define: %s: field %u (%s): bad descriptor, flags "
				   "or reserved", c->name, i, fd[i].name ? fd[i].name : "NULL");
			return -EINVAL;
		}
		f = calloc(1, sizeof(*f));
		if (!f || !(f->name = strdup(fd[i].name)) || !(f->sig = strdup(fd[i].sig))) {
			if (f)
				free(f->name);
			free(f);
			return -ENOMEM;
		}
		f->cls = c;
		f->type = type_char(f->sig);
		f->is_static = fd[i].flags & KGC_JNI_STATIC;
		f->next = c->fields;
		c->fields = f;
		if (f->is_static) {
			if (f->type == 'L' && !(f->sref = kgc_handle_new(t, NULL)))
				return -ENOMEM;
			continue;
		}
		sz = type_size(f->type);
		c->size = (c->size + sz - 1) & ~(uint32_t)(sz - 1);
		f->offset = KGC_HEADER_SIZE + c->size;
		c->size += sz;
	}
	return 0;
}

static int methods_add(struct kgcj_class *c, const struct kgc_jni_method_def *md, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		struct kgcj_method *m;
		int rc;

		if (!md[i].name || !md[i].sig || md[i].reserved ||
		    (md[i].flags & ~(KGC_JNI_STATIC | KGC_JNI_NATIVE))) {
			kgcj_error("kgc_jni_class_define: %s: method %u: NULL name/sig, flags or "
				   "reserved", c->name, i);
			return -EINVAL;
		}
		m = calloc(1, sizeof(*m));
		if (!m || !(m->name = strdup(md[i].name)) || !(m->sig = strdup(md[i].sig))) {
			if (m)
				free(m->name);
			free(m);
			return -ENOMEM;
		}
		m->cls = c;
		m->flags = md[i].flags;
		m->fn = md[i].fn;
		m->data = md[i].data;
		m->next = c->methods;
		c->methods = m;
		rc = method_desc_parse(m);
		if (rc) {
			kgcj_error("kgc_jni_class_define: %s.%s: bad method descriptor '%s'",
				   c->name, m->name, m->sig);
			return rc;
		}
	}
	return 0;
}

/* The instance type: payload c->size, every reference field of c and its supers. */
static int type_register(struct kgcj_vm *vm, struct kgcj_class *c)
{
	uint32_t offs[256], n = 0;
	struct kgc_type_desc d = { .name = c->name, .payload_size = c->size };

	for (struct kgcj_class *k = c; k; k = k->super)
		for (struct kgcj_field *f = k->fields; f; f = f->next)
			if (!f->is_static && f->type == 'L') {
				if (n == 256)
					return -EINVAL;
				offs[n++] = f->offset;
			}
	d.nrefs = n;
	d.ref_offsets = offs;
	return kgc_type_register(vm->heap, &d, &c->type);
}

static int mirror_new(struct kgcj_vm *vm, kgc_thread *t, struct kgcj_class *c)
{
	kgc_obj m = kgc_alloc(t, vm->mirror_type);

	if (!m)
		return -ENOMEM;
	KGC_FIELD(m, KGC_HEADER_SIZE, struct kgcj_class *) = c;
	c->mirror = kgc_handle_new(t, m);
	return c->mirror ? 0 : -ENOMEM;
}

/* Publishes c (vm->lock): -EEXIST if the name is taken. */
static int class_publish(struct kgcj_vm *vm, struct kgcj_class *c)
{
	int rc = 0;

	pthread_mutex_lock(&vm->lock);
	if (kgcj_class_find(vm, c->name)) {
		rc = -EEXIST;
	} else if (c->type >= MAX_TYPES) {
		rc = -ENOSPC;
	} else {
		if (c->type) {
			__atomic_store_n(&vm->by_type[c->type], c, __ATOMIC_RELEASE);
			if (c->type >= vm->ntypes)
				__atomic_store_n(&vm->ntypes, c->type + 1, __ATOMIC_RELEASE);
		}
		c->next = vm->classes;
		__atomic_store_n(&vm->classes, c, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&vm->lock);
	return rc;
}

/* Defines a class; type: its instances' existing type id (array classes,
 * java/lang/Class), or 0 to register one from its fields. */
static int class_define(struct kgcj_vm *vm, kgc_thread *t, const struct kgc_jni_class_def *def,
			kgc_type_id type, struct kgcj_class **out)
{
	struct kgcj_class *c = calloc(1, sizeof(*c));
	int rc = -ENOMEM;

	if (!c || !(c->name = strdup(def->name)))
		goto fail;
	if (def->super || (vm->c_object && strcmp(def->name, "java/lang/Object"))) {
		c->super = kgcj_class_load(vm, t, def->super ? def->super : "java/lang/Object");
		if (!c->super) {
			kgcj_error("kgc_jni_class_define: %s: unknown superclass %s", def->name,
				   def->super);
			rc = -EINVAL;
			goto fail;
		}
		c->size = c->super->size;
	}
	rc = fields_add(c, t, def->fields, def->nfields);
	if (!rc)
		rc = methods_add(c, def->methods, def->nmethods);
	if (!rc && !type)
		rc = type_register(vm, c);
	c->type = type ? type : c->type;
	if (!rc)
		rc = mirror_new(vm, t, c);
	if (!rc)
		rc = class_publish(vm, c);
	if (rc == -EEXIST)
		kgcj_error("kgc_jni_class_define: class %s is defined already", def->name);
	if (rc)
		goto fail;
	if (out)
		*out = c;
	return 0;
fail:
	if (c)
		class_free(c, t);
	return rc;
}

KGC_API int kgc_jni_class_define(JavaVM *jvm, kgc_thread *t, const struct kgc_jni_class_def *def)
{
	struct kgcj_vm *vm = VM(jvm);

	if (!vm || !t || !def || !def->name) {
		kgcj_error("kgc_jni_class_define: NULL vm, thread, definition or name");
		return -EINVAL;
	}
	if (def->size != sizeof(*def) || def->flags || def->reserved[0] || def->reserved[1] ||
	    (def->nfields && !def->fields) || (def->nmethods && !def->methods)) {
		kgcj_error("kgc_jni_class_define: %s: size %u (want %zu), flags or reserved not "
			   "zero, or a NULL table", def->name, def->size, sizeof(*def));
		return -EINVAL;
	}
	return class_define(vm, t, def, 0, NULL);
}

struct kgcj_class *kgcj_class_of_owner(struct kgcj_vm *vm, kgc_thread *t, kgc_jclass owner)
{
	struct kgcj_class *c = __atomic_load_n(&vm->classes, __ATOMIC_ACQUIRE);
	struct kgc_jni_class_def d = { .size = sizeof(d) };

	for (; c; c = c->next)
		if (__atomic_load_n(&c->owner, __ATOMIC_RELAXED) == owner)
			return c;
	d.name = kgc_native_class_name(owner);
	c = kgcj_class_load(vm, t, d.name);
	/* a class only the natives name: the host did not define it */
	if (!c && class_define(vm, t, &d, 0, &c) && !(c = kgcj_class_find(vm, d.name)))
		return NULL;
	__atomic_store_n(&c->owner, owner, __ATOMIC_RELAXED);
	return c;
}

/* ------------------------------------------------------ the core classes */

#define FIELD(n, s) { .name = (n), .sig = (s) }
static const struct kgc_jni_field_def string_fields[] = { FIELD("value", "[C") };
static const struct kgc_jni_field_def throwable_fields[] = {
	FIELD("detailMessage", "Ljava/lang/String;"),
};
static const struct kgc_jni_field_def buffer_fields[] = {
	FIELD("address", "J"), FIELD("capacity", "I"),
};

/* java/lang/Throwable's methods, written with the env like any host method */
static void throwable_init(JNIEnv *env, jobject self, const jvalue *args, jvalue *res, void *d)
{
	(*env)->SetObjectField(env, self, (jfieldID)ENV(env)->vm->f_exc_message, args[0].l);
}

static void throwable_init0(JNIEnv *env, jobject self, const jvalue *args, jvalue *res, void *d)
{
}

static void throwable_message(JNIEnv *env, jobject self, const jvalue *args, jvalue *res,
			      void *d)
{
	res->l = (*env)->GetObjectField(env, self, (jfieldID)ENV(env)->vm->f_exc_message);
}

/* toString(): "java.lang.IllegalStateException: message" */
static void throwable_string(JNIEnv *env, jobject self, const jvalue *args, jvalue *res, void *d)
{
	struct kgcj_env *e = ENV(env);
	jstring m = (*env)->GetObjectField(env, self, (jfieldID)e->vm->f_exc_message);
	const char *mu = m ? (*env)->GetStringUTFChars(env, m, NULL) : NULL;
	struct kgcj_class *c;
	char buf[1024], *p;
	bool n;

	n = kgcj_in(e);
	c = kgcj_class_of_obj(e->vm, kgcj_deref(e, self, "Throwable.toString"));
	kgcj_out(e, n);
	snprintf(buf, sizeof(buf), "%s%s%s", c ? c->name : "?", mu ? ": " : "", mu ? mu : "");
	for (p = buf; *p && *p != ':'; p++)
		if (*p == '/')
			*p = '.';
	if (mu)
		(*env)->ReleaseStringUTFChars(env, m, mu);
	res->l = (*env)->NewStringUTF(env, buf);
}

static const struct kgc_jni_method_def throwable_methods[] = {
	{ .name = "toString", .sig = "()Ljava/lang/String;", .fn = throwable_string },
	{ .name = "<init>", .sig = "()V", .fn = throwable_init0 },
	{ .name = "<init>", .sig = "(Ljava/lang/String;)V", .fn = throwable_init },
	{ .name = "getMessage", .sig = "()Ljava/lang/String;", .fn = throwable_message },
};

/* name, superclass (NULL: Object): defined in this order */
static const char *const core_classes[][2] = {
	{ "java/lang/Exception", "java/lang/Throwable" },
	{ "java/lang/Error", "java/lang/Throwable" },
	{ "java/lang/RuntimeException", "java/lang/Exception" },
	{ "java/io/IOException", "java/lang/Exception" },
	{ "java/lang/InstantiationException", "java/lang/Exception" },
	{ "java/lang/IllegalArgumentException", "java/lang/RuntimeException" },
	{ "java/lang/IllegalStateException", "java/lang/RuntimeException" },
	{ "java/lang/IllegalMonitorStateException", "java/lang/RuntimeException" },
	{ "java/lang/NullPointerException", "java/lang/RuntimeException" },
	{ "java/lang/ArithmeticException", "java/lang/RuntimeException" },
	{ "java/lang/ArrayStoreException", "java/lang/RuntimeException" },
	{ "java/lang/ClassCastException", "java/lang/RuntimeException" },
	{ "java/lang/NegativeArraySizeException", "java/lang/RuntimeException" },
	{ "java/lang/UnsupportedOperationException", "java/lang/RuntimeException" },
	{ "java/lang/IndexOutOfBoundsException", "java/lang/RuntimeException" },
	{ "java/lang/ArrayIndexOutOfBoundsException", "java/lang/IndexOutOfBoundsException" },
	{ "java/lang/StringIndexOutOfBoundsException", "java/lang/IndexOutOfBoundsException" },
	{ "java/lang/VirtualMachineError", "java/lang/Error" },
	{ "java/lang/OutOfMemoryError", "java/lang/VirtualMachineError" },
	{ "java/lang/InternalError", "java/lang/VirtualMachineError" },
	{ "java/lang/LinkageError", "java/lang/Error" },
	{ "java/lang/NoClassDefFoundError", "java/lang/LinkageError" },
	{ "java/lang/IncompatibleClassChangeError", "java/lang/LinkageError" },
	{ "java/lang/NoSuchFieldError", "java/lang/IncompatibleClassChangeError" },
	{ "java/lang/NoSuchMethodError", "java/lang/IncompatibleClassChangeError" },
	{ "java/lang/AbstractMethodError", "java/lang/IncompatibleClassChangeError" },
	{ "java/lang/ClassFormatError", "java/lang/LinkageError" },
	{ "java/nio/ByteBuffer", "java/nio/Buffer" },
};

/* What ToReflected* make and FromReflected* read (jni_reflect.c): the
 * declaring class, the index in its method or field list, the name. */
static const struct kgc_jni_field_def reflect_fields[] = {
	FIELD("clazz", "Ljava/lang/Class;"), FIELD("slot", "I"), FIELD("name", "Ljava/lang/String;"),
};
static const char *const reflect_classes[] = {
	"java/lang/reflect/Method", "java/lang/reflect/Constructor", "java/lang/reflect/Field",
};
/* GetModule's answer: every class is in the unnamed module (name null) */
static const struct kgc_jni_field_def module_fields[] = { FIELD("name", "Ljava/lang/String;") };

static const char *const array_classes[KGC_PRIM_COUNT] = {
	[KGC_PRIM_BOOLEAN] = "[Z", [KGC_PRIM_BYTE] = "[B", [KGC_PRIM_CHAR] = "[C",
	[KGC_PRIM_SHORT] = "[S", [KGC_PRIM_INT] = "[I", [KGC_PRIM_FLOAT] = "[F",
	[KGC_PRIM_LONG] = "[J", [KGC_PRIM_DOUBLE] = "[D",
};

static int core_define(struct kgcj_vm *vm, kgc_thread *t, const char *name, const char *super,
		       const struct kgc_jni_field_def *f, uint32_t nf,
		       const struct kgc_jni_method_def *m, uint32_t nm, kgc_type_id type,
		       struct kgcj_class **out)
{
	struct kgc_jni_class_def d = {
		.size = sizeof(d), .name = name, .super = super, .fields = f, .nfields = nf,
		.methods = m, .nmethods = nm,
	};

	return class_define(vm, t, &d, type, out);
}

/* The unnamed module, held by a global handle for the VM's life. */
static int module_new(struct kgcj_vm *vm, kgc_thread *t, struct kgcj_class *c)
{
	kgc_obj o = kgc_alloc(t, c->type);

	vm->module = o ? kgc_handle_new(t, o) : NULL;
	return vm->module ? 0 : -ENOMEM;
}

int kgcj_host_init(struct kgcj_vm *vm, kgc_thread *t)
{
	struct kgc_type_desc md = { .name = "java/lang/Class", .payload_size = 8 };
	struct kgcj_class *c;
	int rc;

	vm->by_type = calloc(MAX_TYPES, sizeof(*vm->by_type));
	if (!vm->by_type)
		return -ENOMEM;
	rc = kgc_type_register(vm->heap, &md, &vm->mirror_type);
	if (!rc)
		rc = core_define(vm, t, "java/lang/Object", NULL, NULL, 0, NULL, 0, 0, &vm->c_object);
	if (!rc)
		rc = core_define(vm, t, "java/lang/Class", NULL, NULL, 0, NULL, 0, vm->mirror_type,
				 &vm->c_class);
	if (!rc)
		rc = core_define(vm, t, "java/lang/String", NULL, string_fields, 1, NULL, 0, 0,
				 &vm->c_string);
	if (!rc)
		rc = core_define(vm, t, "java/lang/Throwable", NULL, throwable_fields, 1,
				 throwable_methods, 4, 0,
				 &vm->c_throwable);
	if (!rc)
		rc = core_define(vm, t, "java/nio/Buffer", NULL, buffer_fields, 2, NULL, 0, 0,
				 &vm->c_buffer);
	for (size_t i = 0; !rc && i < sizeof(core_classes) / sizeof(core_classes[0]); i++)
		rc = core_define(vm, t, core_classes[i][0], core_classes[i][1], NULL, 0, NULL, 0,
				 0, &c);
	for (int p = 0; !rc && p < KGC_PRIM_COUNT; p++)
		rc = core_define(vm, t, array_classes[p], NULL, NULL, 0, NULL, 0,
				 KGC_TYPE_PRIM_ARRAY(p), &c);
	if (!rc)
		rc = core_define(vm, t, "[Ljava/lang/Object;", NULL, NULL, 0, NULL, 0,
				 KGC_TYPE_REF_ARRAY, &c);
	for (size_t i = 0; !rc && i < sizeof(reflect_classes) / sizeof(reflect_classes[0]); i++)
		rc = core_define(vm, t, reflect_classes[i], NULL, reflect_fields, 3, NULL, 0, 0, &c);
	if (!rc)
		rc = core_define(vm, t, "java/lang/Module", NULL, module_fields, 1, NULL, 0, 0, &c);
	if (!rc)
		rc = module_new(vm, t, c);
	if (rc)
		return rc;
	vm->f_str_value = kgcj_field_find(vm->c_string, "value", "[C", false);
	vm->f_exc_message = kgcj_field_find(vm->c_throwable, "detailMessage",
					    "Ljava/lang/String;", false);
	vm->f_buf_address = kgcj_field_find(vm->c_buffer, "address", "J", false);
	vm->f_buf_capacity = kgcj_field_find(vm->c_buffer, "capacity", "I", false);
	return 0;
}

void kgcj_host_free(struct kgcj_vm *vm, kgc_thread *t)
{
	if (vm->module)
		kgc_handle_free(t, vm->module);
	vm->module = NULL;
	while (vm->classes) {
		struct kgcj_class *c = vm->classes;

		vm->classes = c->next;
		class_free(c, t);
	}
	free(vm->by_type);
	vm->by_type = NULL;
}
