/* SPDX-License-Identifier: MIT */
/*
 * klisp - a tiny Scheme-like interpreter written the way a language runtime
 * uses kgc (see README.md). Everything the language sees lives in the kgc
 * heap and moves:
 *
 *   pair     user type {car, cdr}            int      fixnum 2n+1 (a tagged immediate),
 *                                            else user type {int64}
 *   symbol   user type {name, str/id hash}   closure  user type {params, body, env}
 *   env      user type {names, vals, parent} const    #t, #f, #<void> (in handles)
 *   prim     user type {builtin index}       thread   user type {slot index}
 *   string   byte[] (KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE))
 *   vector   ref[]  (KGC_TYPE_REF_ARRAY)     ()       NULL
 *
 * Integers in [-2^62, 2^62) are fixnums: the value n stored as 2n+1 in the
 * reference slot itself, a tagged immediate (kgc_options.tag_mask = 1: the
 * collector and the barriers never read through a value with bit 0 set).
 * Arithmetic on them allocates nothing; only larger integers are boxed.
 * eq? on two equal fixnums is true (Scheme's usual fixnum semantics); an
 * immediate is no object, so it never goes into a handle, a weak cell or
 * the identity hash (eq-hash hashes its value).
 *
 * Rooting discipline (the one rule that matters with a moving collector):
 * a kgc_obj held in a C variable is valid only until the next allocation.
 * Every function that allocates keeps the objects it needs afterwards in
 * KGC_ROOTS slots (a frame popped on every return path) and re-reads them
 * from the slots after each allocation. Functions that take kgc_obj
 * arguments root them on entry, before they allocate.
 *
 * Shared state: the symbol table (a C hash table of kgc_weak cells: an
 * unreferenced symbol is collected), and the global environment (a heap
 * vector of alists keyed by the symbol's identity hash, held by a global
 * handle). Interpreter threads (spawn/join) share both. Locks that a thread
 * may wait for are taken in native state (lock_managed), so a thread waiting
 * for one never holds up a collection, and the holder may allocate.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <kgc.h>
#include <kgc_native.h>

typedef kgc_obj obj;
typedef kgc_thread T;

/* ------------------------------------------------------------- object model */

static kgc_heap *H;
static kgc_type_id T_PAIR, T_INT, T_SYM, T_CLOS, T_ENV, T_PRIM, T_CONST, T_THREAD;
#define T_STR KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE)
#define T_VEC KGC_TYPE_REF_ARRAY

enum {
	PAIR_CAR = 8, PAIR_CDR = 16,
	INT_VAL = 8,
	SYM_NAME = 8, SYM_STRHASH = 16, SYM_IDHASH = 20,
	CLOS_PARAMS = 8, CLOS_BODY = 16, CLOS_ENV = 24,
	ENV_NAMES = 8, ENV_VALS = 16, ENV_PARENT = 24,
	PRIM_IDX = 8, CONST_KIND = 8, THREAD_IDX = 8,
};

static const uint32_t pair_refs[] = { PAIR_CAR, PAIR_CDR };
static const uint32_t sym_refs[] = { SYM_NAME };
static const uint32_t three_refs[] = { 8, 16, 24 };

static void die(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "klisp: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

/* Objects this thread allocated; added to allocs_total when it detaches. */
static __thread uint64_t allocs;
static uint64_t allocs_total;

static obj alloc(T *t, kgc_type_id type)
{
	obj o = kgc_alloc(t, type);

	allocs++;
	if (!o)
		die("out of memory: %s", kgc_last_error());
	return o;
}

static obj alloc_array(T *t, kgc_type_id type, size_t n)
{
	obj o = kgc_alloc_array(t, type, n);

	allocs++;
	if (!o)
		die("out of memory: %s", kgc_last_error());
	return o;
}

/*
 * A fixnum: n as 2n+1, never a pointer (the heap's tag_mask is 1).
 * -DKLISP_BOXED_INTS builds klisp without tagged immediates, for
 * bench/klispbench: every integer boxed, tag_mask 0 (nothing is a fixnum).
 */
#define FIX_MIN (-((int64_t)1 << 62))
#define FIX_MAX (((int64_t)1 << 62) - 1)
#ifdef KLISP_BOXED_INTS
#define KLISP_TAG_MASK 0
static int is_fix(obj o) { return 0; }
#else
#define KLISP_TAG_MASK 1
static int is_fix(obj o) { return (uintptr_t)o & 1; }
#endif
static obj fix(int64_t v) { return (obj)(uintptr_t)((uint64_t)v << 1 | 1); }
static int64_t fix_val(obj o) { return (int64_t)(uintptr_t)o >> 1; }

static kgc_type_id type_of(obj o) { return is_fix(o) ? T_INT : o ? kgc_obj_type(o) : 0; }
static int is(obj o, kgc_type_id ty) { return o && type_of(o) == ty; }

static obj car(obj p) { return kgc_get_ref(p, PAIR_CAR); }
static obj cdr(obj p) { return kgc_get_ref(p, PAIR_CDR); }

#ifdef KGC_V1_CALLS
/* Built with KGC_V1_CALLS (bench/klispbench's "before"): klisp as before
 * issue 31, the values rooted in a frame across kgc_alloc, then stored
 * through kgc_set_ref. */
static obj cons(T *t, obj a, obj d)
{
	KGC_ROOTS(t, r, 2);
	obj p;

	r[0] = a;
	r[1] = d;
	p = alloc(t, T_PAIR);		/* a and d are stale from here on: use r[] */
	kgc_set_ref(t, p, PAIR_CAR, r[0]);
	kgc_set_ref(t, p, PAIR_CDR, r[1]);
	return p;
}
#else
/*
 * An object with its first n reference fields set (pairs, environments,
 * closures: their reference fields come first). API v2: kgc_alloc_init
 * keeps the values across a collection itself and stores them without a
 * barrier: no frame here, the values need no root.
 */
static obj alloc_init(T *t, kgc_type_id type, obj *v, int n)
{
	obj o = kgc_alloc_init(t, type, v, n);

	allocs++;
	if (!o)
		die("out of memory: %s", kgc_last_error());
	return o;
}

static obj cons(T *t, obj a, obj d)
{
	obj v[2] = { a, d };	/* PAIR_CAR, PAIR_CDR */

	return alloc_init(t, T_PAIR, v, 2);
}
#endif

static uint64_t int_boxes;	/* integers allocated in the heap (--stats) */

static obj mk_int(T *t, int64_t v)
{
	obj o;

	if (v >= FIX_MIN && v <= FIX_MAX && KLISP_TAG_MASK)
		return fix(v);
	o = alloc(t, T_INT);
	__atomic_fetch_add(&int_boxes, 1, __ATOMIC_RELAXED);
	KGC_FIELD(o, INT_VAL, int64_t) = v;
	return o;
}

static int64_t int_val(obj o)
{
	if (is_fix(o))
		return fix_val(o);
	if (!is(o, T_INT))
		die("not an integer");
	return KGC_FIELD(o, INT_VAL, int64_t);
}

static obj mk_string(T *t, const char *s, size_t n)
{
	obj o = alloc_array(t, T_STR, n);

	memcpy(kgc_array_data(o), s, n);
	return o;
}

/* Constants live in global handles: objects move, so read them each time. */
static kgc_handle h_true, h_false, h_void, h_globals;
#define TRUE_ kgc_handle_get(h_true)
#define FALSE_ kgc_handle_get(h_false)
#define VOID_ kgc_handle_get(h_void)
static obj boolean(int b) { return b ? TRUE_ : FALSE_; }
static int truthy(obj o) { return o != FALSE_; }

/* ------------------------------------------------------------------- locks */

/*
 * A lock another attached thread may hold while it allocates: wait for it
 * in native state, or a collection that thread requests would wait for us.
 */
static void lock_managed(T *t, pthread_mutex_t *mu)
{
	if (pthread_mutex_trylock(mu) == 0)
		return;
	kgc_enter_native(t);
	pthread_mutex_lock(mu);
	kgc_leave_native(t);
}

/* --------------------------------------------------- symbols (a weak table) */

struct syment {
	struct syment *next;
	uint32_t hash;
	kgc_weak cell;			/* the symbol, or NULL once collected */
};

#define SYMTAB_BUCKETS 1024
static struct syment *symtab[SYMTAB_BUCKETS];
static pthread_mutex_t symtab_mu = PTHREAD_MUTEX_INITIALIZER;

static uint32_t str_hash(const char *s, size_t n)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (uint8_t)s[i]) * 16777619u;
	return h;
}

static int sym_is(obj sym, const char *s, size_t n)
{
	obj name = kgc_get_ref(sym, SYM_NAME);

	return kgc_array_length(name) == n && !memcmp(kgc_array_data(name), s, n);
}

/* s must not point into the heap: the allocation below may move it. */
static obj intern(T *t, const char *s, size_t n)
{
	uint32_t h = str_hash(s, n);
	struct syment **pp, *e;
	KGC_ROOTS(t, r, 1);

	lock_managed(t, &symtab_mu);
	for (pp = &symtab[h % SYMTAB_BUCKETS]; (e = *pp);) {
		obj o = kgc_weak_get(t, e->cell);

		if (!o) {			/* collected: drop the entry */
			*pp = e->next;
			kgc_weak_free(t, e->cell);
			free(e);
			continue;
		}
		if (e->hash == h && sym_is(o, s, n)) {
			pthread_mutex_unlock(&symtab_mu);
			return o;
		}
		pp = &e->next;
	}
	/* allocating under the lock is fine: waiters wait in native state */
	KGC_ROOTS(t, sym, 1);
	r[0] = mk_string(t, s, n);
	sym[0] = alloc(t, T_SYM);
	kgc_set_ref(t, sym[0], SYM_NAME, r[0]);
	KGC_FIELD(sym[0], SYM_STRHASH, uint32_t) = h;
	/* the identity hash survives moves: the global environment keys on it */
	uint32_t idh = kgc_identity_hash(t, sym[0]);
	KGC_FIELD(sym[0], SYM_IDHASH, uint32_t) = idh;
	e = malloc(sizeof(*e));
	if (!e || !(e->cell = kgc_weak_new(t, sym[0])))
		die("symbol table: %s", e ? kgc_last_error() : "out of memory");
	e->hash = h;
	e->next = symtab[h % SYMTAB_BUCKETS];
	symtab[h % SYMTAB_BUCKETS] = e;
	pthread_mutex_unlock(&symtab_mu);
	return sym[0];
}

/* Live symbols; drops the entries of collected ones. */
static long symbol_count(T *t)
{
	long n = 0;

	lock_managed(t, &symtab_mu);
	for (int b = 0; b < SYMTAB_BUCKETS; b++)
		for (struct syment **pp = &symtab[b], *e; (e = *pp);) {
			if (!kgc_weak_get(t, e->cell)) {
				*pp = e->next;
				kgc_weak_free(t, e->cell);
				free(e);
				continue;
			}
			n++;
			pp = &e->next;
		}
	pthread_mutex_unlock(&symtab_mu);
	return n;
}

static void symtab_free(T *t)
{
	for (int b = 0; b < SYMTAB_BUCKETS; b++)
		while (symtab[b]) {
			struct syment *e = symtab[b];

			symtab[b] = e->next;
			kgc_weak_free(t, e->cell);
			free(e);
		}
}

/* Special-form symbols, kept alive (and so interned once) by handles. */
enum { S_QUOTE, S_IF, S_DEFINE, S_SET, S_LAMBDA, S_LET, S_BEGIN, S_AND, S_OR, S_COND,
       S_ELSE, S_WHILE, NSPECIAL };
static const char *special_names[NSPECIAL] = {
	"quote", "if", "define", "set!", "lambda", "let", "begin", "and", "or", "cond",
	"else", "while",
};
static kgc_handle h_special[NSPECIAL];
#define SPECIAL(i) kgc_handle_get(h_special[i])

/* ---------------------------------------- the global environment (shared) */

/*
 * A vector of GLOBAL_BUCKETS alists ((sym . value) ...), indexed by the
 * symbol's identity hash. Writers (define, set!) hold globals_mu; readers
 * take no lock: a binding is published fully built (release), a reader
 * acquires the bucket head.
 */
#define GLOBAL_BUCKETS 512
static pthread_mutex_t globals_mu = PTHREAD_MUTEX_INITIALIZER;

static obj *bucket_slot(obj sym)
{
	obj g = kgc_handle_get(h_globals);

	return (obj *)kgc_array_data(g) + KGC_FIELD(sym, SYM_IDHASH, uint32_t) % GLOBAL_BUCKETS;
}

static obj global_binding(obj sym)
{
	for (obj b = __atomic_load_n(bucket_slot(sym), __ATOMIC_ACQUIRE); b; b = cdr(b))
		if (car(car(b)) == sym)
			return car(b);
	return NULL;
}

static void global_define(T *t, obj sym, obj val)
{
	KGC_ROOTS(t, r, 3);
	obj b;

	r[0] = sym;
	r[1] = val;
	lock_managed(t, &globals_mu);
	if ((b = global_binding(r[0]))) {
		__atomic_thread_fence(__ATOMIC_RELEASE);
		kgc_set_ref(t, b, PAIR_CDR, r[1]);
	} else {
		r[2] = cons(t, r[0], r[1]);
		r[2] = cons(t, r[2], *bucket_slot(r[0]));
		__atomic_thread_fence(__ATOMIC_RELEASE);
		obj g = kgc_handle_get(h_globals);
		kgc_array_set_ref(t, g, KGC_FIELD(r[0], SYM_IDHASH, uint32_t) % GLOBAL_BUCKETS, r[2]);
	}
	pthread_mutex_unlock(&globals_mu);
}

static const char *sym_name(obj sym, int *len)
{
	obj name = kgc_get_ref(sym, SYM_NAME);

	*len = (int)kgc_array_length(name);
	return kgc_array_data(name);
}

static void unbound(obj sym)
{
	int n;
	const char *s = sym_name(sym, &n);

	die("unbound variable: %.*s", n, s);
}

/* ------------------------------------------------ lexical environments */

/* The (names . vals) cell position of sym in env's frames; NULL: global. */
static obj env_lookup_cell(obj env, obj sym)
{
	for (; env; env = kgc_get_ref(env, ENV_PARENT)) {
		obj n = kgc_get_ref(env, ENV_NAMES), v = kgc_get_ref(env, ENV_VALS);

		for (; n; n = cdr(n), v = cdr(v))
			if (car(n) == sym)
				return v;
	}
	return NULL;
}

static obj lookup(obj sym, obj env)
{
	obj c = env_lookup_cell(env, sym);

	if (c)
		return car(c);
	if (!(c = global_binding(sym)))
		unbound(sym);
	return cdr(c);
}

static obj mk_env(T *t, obj names, obj vals, obj parent)
{
#ifdef KGC_V1_CALLS
	KGC_ROOTS(t, r, 3);
	obj e;

	r[0] = names;
	r[1] = vals;
	r[2] = parent;
	e = alloc(t, T_ENV);
	kgc_set_ref(t, e, ENV_NAMES, r[0]);
	kgc_set_ref(t, e, ENV_VALS, r[1]);
	kgc_set_ref(t, e, ENV_PARENT, r[2]);
	return e;
#else
	obj v[3] = { names, vals, parent };	/* ENV_NAMES, ENV_VALS, ENV_PARENT */

	return alloc_init(t, T_ENV, v, 3);
#endif
}

static void define(T *t, obj sym, obj val, obj env)
{
	KGC_ROOTS(t, r, 3);

	if (!env) {
		global_define(t, sym, val);
		return;
	}
	r[0] = sym;
	r[1] = val;
	r[2] = env;
	/* redefinition: only this frame counts */
	for (obj n = kgc_get_ref(r[2], ENV_NAMES), v = kgc_get_ref(r[2], ENV_VALS); n;
	     n = cdr(n), v = cdr(v))
		if (car(n) == r[0]) {
			kgc_set_ref(t, v, PAIR_CAR, r[1]);
			return;
		}
	obj n = cons(t, r[0], kgc_get_ref(r[2], ENV_NAMES));
	kgc_set_ref(t, r[2], ENV_NAMES, n);
	obj v = cons(t, r[1], kgc_get_ref(r[2], ENV_VALS));
	kgc_set_ref(t, r[2], ENV_VALS, v);
}

/* ------------------------------------------------------------------ output */

static pthread_mutex_t out_mu = PTHREAD_MUTEX_INITIALIZER;

struct buf {
	char *p;
	size_t n, cap;
};

static void bput(struct buf *b, const char *s, size_t n)
{
	if (b->n + n + 1 > b->cap) {
		b->cap = (b->n + n + 1) * 2;
		if (!(b->p = realloc(b->p, b->cap)))
			die("out of memory");
	}
	memcpy(b->p + b->n, s, n);
	b->n += n;
	b->p[b->n] = 0;
}

static void bprintf(struct buf *b, const char *fmt, ...)
{
	char tmp[64];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	bput(b, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

/* Prints without allocating: the raw pointers stay valid throughout. */
static void print_obj(struct buf *b, obj o, int write)
{
	kgc_type_id ty = type_of(o);

	if (!o) {
		bput(b, "()", 2);
	} else if (ty == T_INT) {
		bprintf(b, "%lld", (long long)int_val(o));
	} else if (ty == T_STR) {
		if (write)
			bput(b, "\"", 1);
		bput(b, kgc_array_data(o), kgc_array_length(o));
		if (write)
			bput(b, "\"", 1);
	} else if (ty == T_SYM) {
		int n;
		const char *s = sym_name(o, &n);

		bput(b, s, n);
	} else if (ty == T_PAIR) {
		bput(b, "(", 1);
		for (;;) {
			print_obj(b, car(o), write);
			o = cdr(o);
			if (!o)
				break;
			if (!is(o, T_PAIR)) {
				bput(b, " . ", 3);
				print_obj(b, o, write);
				break;
			}
			bput(b, " ", 1);
		}
		bput(b, ")", 1);
	} else if (ty == T_VEC) {
		bput(b, "#(", 2);
		for (size_t i = 0; i < kgc_array_length(o); i++) {
			if (i)
				bput(b, " ", 1);
			print_obj(b, kgc_array_get_ref(o, i), write);
		}
		bput(b, ")", 1);
	} else if (o == TRUE_) {
		bput(b, "#t", 2);
	} else if (o == FALSE_) {
		bput(b, "#f", 2);
	} else if (o == VOID_) {
		bput(b, "#<void>", 7);
	} else if (ty == T_CLOS) {
		bput(b, "#<closure>", 10);
	} else if (ty == T_PRIM) {
		bput(b, "#<primitive>", 12);
	} else if (ty == T_THREAD) {
		bprintf(b, "#<thread %lld>", (long long)KGC_FIELD(o, THREAD_IDX, int64_t));
	} else {
		bprintf(b, "#<%s>", kgc_type_name(H, ty));
	}
}

static void emit(T *t, struct buf *b)
{
	/* stdout's lock is never held across a safepoint: no native state needed */
	pthread_mutex_lock(&out_mu);
	fwrite(b->p, 1, b->n, stdout);
	pthread_mutex_unlock(&out_mu);
	free(b->p);
}

/* ------------------------------------------------------------------ reader */

struct reader {
	const char *p;
	int line;
};

static void skip_ws(struct reader *rd)
{
	for (;;) {
		while (*rd->p == ' ' || *rd->p == '\t' || *rd->p == '\r' || *rd->p == '\n')
			rd->line += *rd->p++ == '\n';
		if (*rd->p != ';')
			return;
		while (*rd->p && *rd->p != '\n')
			rd->p++;
	}
}

static int delim(char c)
{
	return !c || strchr(" \t\r\n();\"'", c);
}

static obj read_expr(T *t, struct reader *rd);

static obj read_list(T *t, struct reader *rd)
{
	KGC_ROOTS(t, r, 3);		/* head, tail, element */

	for (;;) {
		skip_ws(rd);
		if (!*rd->p)
			die("line %d: unterminated list", rd->line);
		if (*rd->p == ')') {
			rd->p++;
			return r[0];
		}
		if (rd->p[0] == '.' && delim(rd->p[1])) {
			rd->p++;
			r[2] = read_expr(t, rd);
			kgc_set_ref(t, r[1], PAIR_CDR, r[2]);
			skip_ws(rd);
			if (*rd->p++ != ')')
				die("line %d: bad dotted list", rd->line);
			return r[0];
		}
		r[2] = read_expr(t, rd);
		obj p = cons(t, r[2], NULL);
		if (r[1])
			kgc_set_ref(t, r[1], PAIR_CDR, p);
		else
			r[0] = p;
		r[1] = p;
	}
}

static obj read_expr(T *t, struct reader *rd)
{
	skip_ws(rd);
	char c = *rd->p;

	if (!c)
		die("line %d: unexpected end of input", rd->line);
	if (c == '(') {
		rd->p++;
		return read_list(t, rd);
	}
	if (c == ')')
		die("line %d: unexpected ')'", rd->line);
	if (c == '\'') {
		KGC_ROOTS(t, r, 1);
		rd->p++;
		r[0] = read_expr(t, rd);
		r[0] = cons(t, r[0], NULL);
		return cons(t, SPECIAL(S_QUOTE), r[0]);
	}
	if (c == '"') {
		struct buf b = { 0 };
		obj s;

		bput(&b, "", 0);
		for (rd->p++; *rd->p != '"'; rd->p++) {
			char ch = *rd->p;

			if (!ch)
				die("line %d: unterminated string", rd->line);
			if (ch == '\\') {
				ch = *++rd->p;
				ch = ch == 'n' ? '\n' : ch == 't' ? '\t' : ch;
			}
			rd->line += ch == '\n';
			bput(&b, &ch, 1);
		}
		rd->p++;
		s = mk_string(t, b.p, b.n);
		free(b.p);
		return s;
	}
	const char *s = rd->p;
	while (!delim(*rd->p))
		rd->p++;
	size_t n = rd->p - s;
	if (n == 2 && s[0] == '#' && (s[1] == 't' || s[1] == 'f'))
		return boolean(s[1] == 't');
	char *end;
	long long v = strtoll(s, &end, 10);
	if (end == rd->p && ((s[0] >= '0' && s[0] <= '9') || (n > 1 && (s[0] == '-' || s[0] == '+'))))
		return mk_int(t, v);
	return intern(t, s, n);		/* s points into the program text, not the heap */
}

/* ------------------------------------------------------------------- eval */

static obj mk_closure(T *t, obj params, obj body, obj env)
{
#ifdef KGC_V1_CALLS
	KGC_ROOTS(t, r, 3);
	obj c;

	r[0] = params;
	r[1] = body;
	r[2] = env;
	c = alloc(t, T_CLOS);
	kgc_set_ref(t, c, CLOS_PARAMS, r[0]);
	kgc_set_ref(t, c, CLOS_BODY, r[1]);
	kgc_set_ref(t, c, CLOS_ENV, r[2]);
	return c;
#else
	obj v[3] = { params, body, env };	/* CLOS_PARAMS, CLOS_BODY, CLOS_ENV */

	return alloc_init(t, T_CLOS, v, 3);
#endif
}

/* A new frame binding clos's parameters to args (a fresh list it may keep). */
static obj bind(T *t, obj clos, obj args)
{
	KGC_ROOTS(t, r, 3);
	obj params = kgc_get_ref(clos, CLOS_PARAMS), p, a;

	r[0] = clos;
	r[1] = args;
	if (is(params, T_SYM)) {		/* (lambda args ...) */
		r[1] = cons(t, r[1], NULL);
		r[2] = cons(t, kgc_get_ref(r[0], CLOS_PARAMS), NULL);
		return mk_env(t, r[2], r[1], kgc_get_ref(r[0], CLOS_ENV));
	}
	for (p = params, a = args; p && a; p = cdr(p), a = cdr(a))
		;
	if (p || a)
		die("wrong number of arguments");
	return mk_env(t, params, args, kgc_get_ref(clos, CLOS_ENV));
}

struct prim {
	const char *name;
	int min, max;			/* arity; max -1: variadic */
	obj (*fn)(T *t, obj *args);	/* args: a rooted slot holding the list */
};

/* Binary operations a call on two fixnums runs without an argument list
 * (eval_fix2); prim_fix2[i]: prims[i]'s, set up by runtime_init. */
enum { FIX2_NONE, FIX2_ADD, FIX2_SUB, FIX2_MUL, FIX2_LT, FIX2_GT, FIX2_LE, FIX2_GE, FIX2_EQ, NFIX2 };
static const char *const fix2_names[NFIX2] = {
	[FIX2_ADD] = "+", [FIX2_SUB] = "-", [FIX2_MUL] = "*", [FIX2_LT] = "<", [FIX2_GT] = ">",
	[FIX2_LE] = "<=", [FIX2_GE] = ">=", [FIX2_EQ] = "=",
};
static uint8_t prim_fix2[128];
static const struct prim *prim_table;	/* prims[], below */

static obj call_prim(T *t, obj prim, obj *args)
{
	const struct prim *p = &prim_table[KGC_FIELD(prim, PRIM_IDX, int64_t)];
	int n = 0;

	for (obj a = *args; a; a = cdr(a))
		n++;
	if (n < p->min || (p->max >= 0 && n > p->max))
		die("%s: wrong number of arguments (%d)", p->name, n);
	return p->fn(t, args);
}

static obj eval(T *t, obj x, obj env);

#ifndef KLISP_NO_FAST_PRIMS
static obj fix2_op(T *t, int op, int64_t x, int64_t y)
{
	switch (op) {
	case FIX2_ADD: return mk_int(t, x + y);		/* fixnums: no int64 overflow */
	case FIX2_SUB: return mk_int(t, x - y);
	case FIX2_MUL: return mk_int(t, (int64_t)((uint64_t)x * (uint64_t)y));	/* wraps, as p_mul */
	case FIX2_LT: return boolean(x < y);
	case FIX2_GT: return boolean(x > y);
	case FIX2_LE: return boolean(x <= y);
	case FIX2_GE: return boolean(x >= y);
	default: return boolean(x == y);
	}
}

/*
 * A call (prim a b) of a primitive with a fast path (arithmetic and
 * comparisons), prim already in r[2], the call in r[0], its environment in
 * r[1]: both arguments are evaluated into r[6] and r[7]; two integers go
 * straight to the operation without an argument list, so (+ a b) on
 * fixnums allocates nothing; otherwise the list is built from the values
 * and the primitive called as usual. 1 and *res set if it handled the call
 * (any other shape: 0, nothing evaluated). -DKLISP_NO_FAST_PRIMS leaves it
 * out (bench/klispbench's "before": klisp as it was before issue 31).
 */
static int eval_fix2(T *t, obj *r, obj *res)
{
	obj args = cdr(r[0]);
	int op = prim_fix2[KGC_FIELD(r[2], PRIM_IDX, int64_t)];

	if (!op || !args || !cdr(args) || cdr(cdr(args)))
		return 0;
	r[6] = eval(t, car(cdr(r[0])), r[1]);
	r[7] = eval(t, car(cdr(cdr(r[0]))), r[1]);
	if (is(r[6], T_INT) && is(r[7], T_INT)) {
		*res = fix2_op(t, op, int_val(r[6]), int_val(r[7]));
		return 1;
	}
	r[3] = cons(t, r[7], NULL);
	r[3] = cons(t, r[6], r[3]);
	*res = call_prim(t, r[2], &r[3]);
	return 1;
}
#endif

static obj eval_body(T *t, obj body, obj env)
{
	KGC_ROOTS(t, r, 2);

	r[0] = body;
	r[1] = env;
	if (!r[0])
		return VOID_;
	for (; cdr(r[0]); r[0] = cdr(r[0]))
		eval(t, car(r[0]), r[1]);
	return eval(t, car(r[0]), r[1]);
}

static obj apply(T *t, obj f, obj args)
{
	KGC_ROOTS(t, r, 2);

	r[0] = f;
	r[1] = args;
	if (is(r[0], T_PRIM))
		return call_prim(t, r[0], &r[1]);
	if (!is(r[0], T_CLOS))
		die("apply: not a procedure");
	r[1] = bind(t, r[0], r[1]);
	return eval_body(t, kgc_get_ref(r[0], CLOS_BODY), r[1]);
}

#define CADR(x) car(cdr(x))
#define CDDR(x) cdr(cdr(x))

/* Tail calls (if, begin, let, cond, and, or, closure bodies) loop here. */
static obj eval(T *t, obj x_, obj env_)
{
	/* 0 expression, 1 environment, 2..8 temporaries */
	KGC_ROOTS(t, r, 9);

	r[0] = x_;
	r[1] = env_;
	for (;;) {
		obj x = r[0], op, v;
		kgc_type_id ty = type_of(x);

		if (ty == T_SYM)
			return lookup(x, r[1]);
		if (ty != T_PAIR)
			return x;
		op = car(x);
		if (is(op, T_SYM)) {
			if (op == SPECIAL(S_QUOTE))
				return CADR(x);
			if (op == SPECIAL(S_IF)) {
				v = eval(t, CADR(r[0]), r[1]);
				x = CDDR(r[0]);
				if (truthy(v))
					r[0] = car(x);
				else if (cdr(x))
					r[0] = CADR(x);
				else
					return VOID_;
				continue;
			}
			if (op == SPECIAL(S_DEFINE)) {
				if (is(CADR(x), T_PAIR)) {	/* (define (f . params) body...) */
					r[2] = mk_closure(t, cdr(CADR(x)), CDDR(x), r[1]);
					define(t, car(CADR(r[0])), r[2], r[1]);
				} else {
					r[2] = eval(t, car(CDDR(x)), r[1]);
					define(t, CADR(r[0]), r[2], r[1]);
				}
				return VOID_;
			}
			if (op == SPECIAL(S_SET)) {
				r[2] = eval(t, car(CDDR(x)), r[1]);
				obj sym = CADR(r[0]), c = env_lookup_cell(r[1], sym);

				if (c) {
					kgc_set_ref(t, c, PAIR_CAR, r[2]);
				} else {
					if (!global_binding(sym))
						unbound(sym);
					global_define(t, sym, r[2]);
				}
				return VOID_;
			}
			if (op == SPECIAL(S_LAMBDA))
				return mk_closure(t, CADR(x), CDDR(x), r[1]);
			if (op == SPECIAL(S_BEGIN)) {
				if (!(r[2] = cdr(x)))
					return VOID_;
				goto body;
			}
			if (op == SPECIAL(S_LET)) {
				/* (let [name] ((var init) ...) body...): names r[2] (tail r[7]),
				 * values r[3] (tail r[8]) */
				r[5] = is(CADR(x), T_SYM) ? CADR(x) : NULL;
				r[4] = r[5] ? car(CDDR(x)) : CADR(x);
				for (r[2] = r[3] = r[7] = r[8] = NULL; r[4]; r[4] = cdr(r[4])) {
					v = eval(t, CADR(car(r[4])), r[1]);
					v = cons(t, v, NULL);
					if (r[8])
						kgc_set_ref(t, r[8], PAIR_CDR, v);
					else
						r[3] = v;
					r[8] = v;
					v = cons(t, car(car(r[4])), NULL);
					if (r[7])
						kgc_set_ref(t, r[7], PAIR_CDR, v);
					else
						r[2] = v;
					r[7] = v;
				}
				r[4] = r[5] ? cdr(CDDR(r[0])) : CDDR(r[0]);
				if (r[5]) {	/* named let: a closure bound in its own frame */
					r[1] = mk_env(t, NULL, NULL, r[1]);
					r[6] = mk_closure(t, r[2], r[4], r[1]);
					define(t, r[5], r[6], r[1]);
				}
				r[1] = mk_env(t, r[2], r[3], r[1]);
				r[2] = r[4];
				if (!r[2])
					return VOID_;
				goto body;
			}
			if (op == SPECIAL(S_AND) || op == SPECIAL(S_OR)) {
				int and = op == SPECIAL(S_AND);

				if (!(r[2] = cdr(x)))
					return boolean(and);
				for (; cdr(r[2]); r[2] = cdr(r[2])) {
					v = eval(t, car(r[2]), r[1]);
					if (truthy(v) != and)
						return v;
				}
				r[0] = car(r[2]);
				continue;
			}
			if (op == SPECIAL(S_COND)) {
				for (r[2] = cdr(x); r[2]; r[2] = cdr(r[2])) {
					obj test = car(car(r[2]));

					v = test == SPECIAL(S_ELSE) ? TRUE_ : eval(t, test, r[1]);
					if (truthy(v)) {
						if (!(r[2] = cdr(car(r[2]))))
							return v;
						goto body;
					}
				}
				return VOID_;
			}
			if (op == SPECIAL(S_WHILE)) {
				while (v = eval(t, CADR(r[0]), r[1]), truthy(v))
					for (r[2] = CDDR(r[0]); r[2]; r[2] = cdr(r[2]))
						eval(t, car(r[2]), r[1]);
				return VOID_;
			}
		}
		/* application: r[2] the procedure, r[3]/r[4] head/tail of the arguments */
		r[2] = eval(t, car(r[0]), r[1]);
#ifndef KLISP_NO_FAST_PRIMS
		if (is(r[2], T_PRIM) && eval_fix2(t, r, &v))
			return v;
#endif
		for (r[3] = r[4] = NULL, r[5] = cdr(r[0]); r[5]; r[5] = cdr(r[5])) {
			v = eval(t, car(r[5]), r[1]);
			obj p = cons(t, v, NULL);

			if (r[4])
				kgc_set_ref(t, r[4], PAIR_CDR, p);
			else
				r[3] = p;
			r[4] = p;
		}
		if (is(r[2], T_PRIM))
			return call_prim(t, r[2], &r[3]);
		if (!is(r[2], T_CLOS)) {
			struct buf b = { 0 };

			print_obj(&b, car(r[0]), 1);
			die("not a procedure: %s", b.p);
		}
		r[1] = bind(t, r[2], r[3]);
		if (!(r[2] = kgc_get_ref(r[2], CLOS_BODY)))
			return VOID_;
body:		/* r[2]: a non-empty body in environment r[1]; the last expression is a tail call */
		for (; cdr(r[2]); r[2] = cdr(r[2]))
			eval(t, car(r[2]), r[1]);
		r[0] = car(r[2]);
	}
}

/* ------------------------------------------------------------- primitives */

#define A0 car(*a)
#define A1 CADR(*a)
#define A2 car(CDDR(*a))

static obj str_arg(obj o, const char *who)
{
	if (!is(o, T_STR))
		die("%s: not a string", who);
	return o;
}

static obj p_add(T *t, obj *a)
{
	int64_t s = 0;

	for (obj p = *a; p; p = cdr(p))
		s += int_val(car(p));
	return mk_int(t, s);
}

static obj p_mul(T *t, obj *a)
{
	int64_t s = 1;

	for (obj p = *a; p; p = cdr(p))
		s *= int_val(car(p));
	return mk_int(t, s);
}

static obj p_sub(T *t, obj *a)
{
	int64_t s = int_val(A0);

	if (!cdr(*a))
		return mk_int(t, -s);
	for (obj p = cdr(*a); p; p = cdr(p))
		s -= int_val(car(p));
	return mk_int(t, s);
}

static obj p_quotient(T *t, obj *a)
{
	int64_t d = int_val(A1);

	if (!d)
		die("quotient: division by zero");
	return mk_int(t, int_val(A0) / d);
}

static obj p_remainder(T *t, obj *a)
{
	int64_t d = int_val(A1);

	if (!d)
		die("remainder: division by zero");
	return mk_int(t, int_val(A0) % d);
}

static obj compare(obj *a, int op)
{
	for (obj p = *a; cdr(p); p = cdr(p)) {
		int64_t x = int_val(car(p)), y = int_val(CADR(p));
		int ok = op == 0 ? x < y : op == 1 ? x > y : op == 2 ? x <= y : op == 3 ? x >= y : x == y;

		if (!ok)
			return FALSE_;
	}
	return TRUE_;
}
static obj p_lt(T *t, obj *a) { return compare(a, 0); }
static obj p_gt(T *t, obj *a) { return compare(a, 1); }
static obj p_le(T *t, obj *a) { return compare(a, 2); }
static obj p_ge(T *t, obj *a) { return compare(a, 3); }
static obj p_numeq(T *t, obj *a) { return compare(a, 4); }

static obj pair_arg(obj o, const char *who)
{
	if (!is(o, T_PAIR))
		die("%s: not a pair", who);
	return o;
}
static obj p_cons(T *t, obj *a) { return cons(t, A0, A1); }
static obj p_car(T *t, obj *a) { return car(pair_arg(A0, "car")); }
static obj p_cdr(T *t, obj *a) { return cdr(pair_arg(A0, "cdr")); }
static obj p_setcar(T *t, obj *a) { kgc_set_ref(t, pair_arg(A0, "set-car!"), PAIR_CAR, A1); return VOID_; }
static obj p_setcdr(T *t, obj *a) { kgc_set_ref(t, pair_arg(A0, "set-cdr!"), PAIR_CDR, A1); return VOID_; }
static obj p_list(T *t, obj *a) { return *a; }	/* the argument list is fresh */

static obj p_length(T *t, obj *a)
{
	int64_t n = 0;

	for (obj p = A0; p; p = cdr(p))
		n++;
	return mk_int(t, n);
}

static obj p_nullp(T *t, obj *a) { return boolean(!A0); }
static obj p_pairp(T *t, obj *a) { return boolean(is(A0, T_PAIR)); }
static obj p_eqp(T *t, obj *a) { return boolean(A0 == A1); }
static obj p_not(T *t, obj *a) { return boolean(!truthy(A0)); }
static obj p_symbolp(T *t, obj *a) { return boolean(is(A0, T_SYM)); }
static obj p_stringp(T *t, obj *a) { return boolean(is(A0, T_STR)); }
static obj p_numberp(T *t, obj *a) { return boolean(is(A0, T_INT)); }
static obj p_vectorp(T *t, obj *a) { return boolean(is(A0, T_VEC)); }
static obj p_procp(T *t, obj *a) { return boolean(is(A0, T_CLOS) || is(A0, T_PRIM)); }

static int equal(obj x, obj y)
{
	for (;;) {
		if (x == y)
			return 1;
		if (!x || !y || type_of(x) != type_of(y))
			return 0;
		kgc_type_id ty = type_of(x);
		if (ty == T_INT)
			return int_val(x) == int_val(y);
		if (ty == T_STR)
			return kgc_array_length(x) == kgc_array_length(y) &&
			       !memcmp(kgc_array_data(x), kgc_array_data(y), kgc_array_length(x));
		if (ty == T_VEC) {
			if (kgc_array_length(x) != kgc_array_length(y))
				return 0;
			for (size_t i = 0; i < kgc_array_length(x); i++)
				if (!equal(kgc_array_get_ref(x, i), kgc_array_get_ref(y, i)))
					return 0;
			return 1;
		}
		if (ty != T_PAIR || !equal(car(x), car(y)))
			return 0;
		x = cdr(x);
		y = cdr(y);
	}
}
static obj p_equalp(T *t, obj *a) { return boolean(equal(A0, A1)); }

static obj display(T *t, obj *a, int write)
{
	struct buf b = { 0 };

	print_obj(&b, A0, write);
	emit(t, &b);
	return VOID_;
}
static obj p_display(T *t, obj *a) { return display(t, a, 0); }
static obj p_write(T *t, obj *a) { return display(t, a, 1); }

static obj p_newline(T *t, obj *a)
{
	struct buf b = { 0 };

	bput(&b, "\n", 1);
	emit(t, &b);
	return VOID_;
}

static obj p_make_vector(T *t, obj *a)
{
	int64_t n = int_val(A0);
	KGC_ROOTS(t, r, 1);

	if (n < 0)
		die("make-vector: negative length");
	r[0] = cdr(*a) ? A1 : FALSE_;
	obj v = alloc_array(t, T_VEC, n);
	for (int64_t i = 0; i < n; i++)
		kgc_array_set_ref(t, v, i, r[0]);
	return v;
}

static obj p_vector(T *t, obj *a)
{
	size_t n = 0, i = 0;

	for (obj p = *a; p; p = cdr(p))
		n++;
	obj v = alloc_array(t, T_VEC, n);
	for (obj p = *a; p; p = cdr(p))	/* *a is a root: re-read after the allocation */
		kgc_array_set_ref(t, v, i++, car(p));
	return v;
}

static size_t index_arg(obj o, obj idx, const char *who)
{
	int64_t i = int_val(idx);

	if (i < 0 || (size_t)i >= kgc_array_length(o))
		die("%s: index %lld out of range", who, (long long)i);
	return i;
}

static obj vec_arg(obj o, const char *who)
{
	if (!is(o, T_VEC))
		die("%s: not a vector", who);
	return o;
}
static obj p_vector_ref(T *t, obj *a) { return kgc_array_get_ref(vec_arg(A0, "vector-ref"), index_arg(A0, A1, "vector-ref")); }
static obj p_vector_set(T *t, obj *a)
{
	kgc_array_set_ref(t, vec_arg(A0, "vector-set!"), index_arg(A0, A1, "vector-set!"), A2);
	return VOID_;
}
static obj p_vector_length(T *t, obj *a) { return mk_int(t, kgc_array_length(vec_arg(A0, "vector-length"))); }

static obj p_string_length(T *t, obj *a) { return mk_int(t, kgc_array_length(str_arg(A0, "string-length"))); }
static obj p_string_ref(T *t, obj *a)
{
	obj s = str_arg(A0, "string-ref");

	return mk_int(t, ((uint8_t *)kgc_array_data(s))[index_arg(s, A1, "string-ref")]);
}

static obj p_string_append(T *t, obj *a)
{
	size_t n = 0, at = 0;

	for (obj p = *a; p; p = cdr(p))
		n += kgc_array_length(str_arg(car(p), "string-append"));
	obj s = alloc_array(t, T_STR, n);
	for (obj p = *a; p; p = cdr(p)) {
		memcpy((char *)kgc_array_data(s) + at, kgc_array_data(car(p)), kgc_array_length(car(p)));
		at += kgc_array_length(car(p));
	}
	return s;
}

static obj p_substring(T *t, obj *a)
{
	int64_t from = int_val(A1), to = int_val(A2);

	if (from < 0 || to < from || (size_t)to > kgc_array_length(str_arg(A0, "substring")))
		die("substring: bad range");
	obj s = alloc_array(t, T_STR, to - from);
	memcpy(kgc_array_data(s), (char *)kgc_array_data(A0) + from, to - from);
	return s;
}

static obj p_make_string(T *t, obj *a)
{
	int64_t n = int_val(A0), c = cdr(*a) ? int_val(A1) : ' ';

	if (n < 0)
		die("make-string: negative length");
	obj s = alloc_array(t, T_STR, n);
	memset(kgc_array_data(s), (int)c, n);
	return s;
}

static obj p_string_eq(T *t, obj *a)
{
	return boolean(equal(str_arg(A0, "string=?"), str_arg(A1, "string=?")));
}

static obj p_number_to_string(T *t, obj *a)
{
	char tmp[32];
	int n = snprintf(tmp, sizeof(tmp), "%lld", (long long)int_val(A0));

	return mk_string(t, tmp, n);
}

/* Copies a string's bytes out of the heap (they move at the next allocation). */
static char *cstr(obj s, size_t *n)
{
	char *p = malloc(kgc_array_length(s) + 1);

	if (!p)
		die("out of memory");
	*n = kgc_array_length(s);
	memcpy(p, kgc_array_data(s), *n);
	p[*n] = 0;
	return p;
}

static obj p_string_to_symbol(T *t, obj *a)
{
	size_t n;
	char *s = cstr(str_arg(A0, "string->symbol"), &n);
	obj sym = intern(t, s, n);

	free(s);
	return sym;
}

static obj p_symbol_to_string(T *t, obj *a)
{
	size_t n;
	char *s;
	obj str;

	if (!is(A0, T_SYM))
		die("symbol->string: not a symbol");
	s = cstr(kgc_get_ref(A0, SYM_NAME), &n);
	str = mk_string(t, s, n);
	free(s);
	return str;
}

static obj p_apply(T *t, obj *a) { return apply(t, A0, A1); }

static obj p_error(T *t, obj *a)
{
	struct buf b = { 0 };

	for (obj p = *a; p; p = cdr(p)) {
		print_obj(&b, car(p), 0);
		bput(&b, " ", 1);
	}
	die("error: %s", b.p);
	return NULL;
}

/* --- the collector seen from the language */

static obj collect(T *t, int kind)
{
	if (kgc_collect(t, kind))
		die("gc: %s", kgc_last_error());
	return VOID_;
}
static obj p_gc(T *t, obj *a) { return collect(t, KGC_GC_FULL); }
static obj p_gc_young(T *t, obj *a) { return collect(t, KGC_GC_YOUNG); }

static void stats(struct kgc_stats *st)
{
	if (kgc_stats_get(H, st, sizeof(*st)))
		die("kgc_stats_get: %s", kgc_last_error());
}

static obj p_gc_count(T *t, obj *a)
{
	struct kgc_stats st;

	stats(&st);
	return mk_int(t, st.young_gcs + st.full_gcs);
}

static obj p_symbol_count(T *t, obj *a) { return mk_int(t, symbol_count(t)); }
static obj p_int_boxes(T *t, obj *a) { return mk_int(t, (int64_t)__atomic_load_n(&int_boxes, __ATOMIC_RELAXED)); }
static obj p_alloc_count(T *t, obj *a) { return mk_int(t, (int64_t)allocs); }	/* this thread's */

/*
 * Finalization through a reference queue (kgc_refqueue): (finalize obj
 * thunk) watches obj with a weak reference attached to the queue, tagged
 * with its entry's index; the thunk is held by a global handle. When a
 * collection finds obj dead the library enqueues the reference after the
 * pause; the main thread runs the thunks of the entries waiting between
 * top-level forms and in (run-finalizers) - on an interpreter thread, so a
 * thunk may allocate and call anything. The thunk must not refer to obj
 * (it would keep it alive): Java's Cleaner rule.
 */
static kgc_handle new_handle(T *t, obj o);

struct final_entry {
	kgc_weak w;		/* NULL: a free entry */
	kgc_handle thunk;
};
static kgc_refqueue *final_q;
static struct final_entry *finals;
static size_t nfinals;
static pthread_mutex_t finals_mu = PTHREAD_MUTEX_INITIALIZER;

static obj p_finalize(T *t, obj *a)
{
	size_t i;
	kgc_weak w;

	if (!A0 || is_fix(A0))
		die("finalize: %s has no identity to watch", A0 ? "a fixnum" : "()");
	if (!(w = kgc_weak_new(t, A0)))
		die("finalize: %s", kgc_last_error());
	lock_managed(t, &finals_mu);
	for (i = 0; i < nfinals && finals[i].w; i++)
		;
	if (i == nfinals) {
		struct final_entry *n = realloc(finals, (nfinals * 2 + 8) * sizeof(*n));

		if (!n)
			die("finalize: out of memory");
		memset(n + nfinals, 0, (nfinals + 8) * sizeof(*n));
		finals = n;
		nfinals = nfinals * 2 + 8;
	}
	finals[i].w = w;
	finals[i].thunk = new_handle(t, A1);
	if (kgc_weak_set_queue(t, w, final_q, i))
		die("finalize: %s", kgc_last_error());
	pthread_mutex_unlock(&finals_mu);
	return VOID_;
}

/* The thunks of the objects found dead so far; how many ran. */
static int64_t run_finalizers(T *t)
{
	struct kgc_ref_event ev;
	int64_t n = 0;
	KGC_ROOTS(t, r, 1);

	if (kgc_cleaners_drain(t))	/* what the collections so far cleared is enqueued */
		die("run-finalizers: %s", kgc_last_error());
	while (kgc_refqueue_poll(final_q, &ev, sizeof(ev)) == 0) {
		lock_managed(t, &finals_mu);
		r[0] = kgc_handle_get(finals[ev.tag].thunk);
		kgc_handle_free(t, finals[ev.tag].thunk);
		kgc_weak_free(t, finals[ev.tag].w);
		finals[ev.tag].w = NULL;
		pthread_mutex_unlock(&finals_mu);
		apply(t, r[0], NULL);
		n++;
	}
	return n;
}

static obj p_run_finalizers(T *t, obj *a) { return mk_int(t, run_finalizers(t)); }

/* (gc-stats): pauses seen by the pause-end hook - (count max-us total-us).
 * The hook runs inside the pause: it only adds to counters. */
static uint64_t hook_pauses, hook_max_ns, hook_total_ns;

static int on_pause_end(kgc_heap *h, const struct kgc_hook_info *in, void *arg)
{
	__atomic_add_fetch(&hook_pauses, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&hook_total_ns, in->duration_ns, __ATOMIC_RELAXED);
	if (in->duration_ns > __atomic_load_n(&hook_max_ns, __ATOMIC_RELAXED))
		__atomic_store_n(&hook_max_ns, in->duration_ns, __ATOMIC_RELAXED);
	return 0;
}

static obj p_gc_stats(T *t, obj *a)
{
	KGC_ROOTS(t, r, 1);

	KGC_ROOTS(t, n, 1);		/* a boxed integer (KLISP_BOXED_INTS) moves */

	n[0] = mk_int(t, (int64_t)(__atomic_load_n(&hook_total_ns, __ATOMIC_RELAXED) / 1000));
	r[0] = cons(t, n[0], NULL);
	n[0] = mk_int(t, (int64_t)(__atomic_load_n(&hook_max_ns, __ATOMIC_RELAXED) / 1000));
	r[0] = cons(t, n[0], r[0]);
	n[0] = mk_int(t, (int64_t)__atomic_load_n(&hook_pauses, __ATOMIC_RELAXED));
	return cons(t, n[0], r[0]);
}

static void finalization_init(void)
{
	if (kgc_refqueue_create(H, &final_q))
		die("kgc_refqueue_create: %s", kgc_last_error());
	if (kgc_hook_set(H, KGC_HOOK_PAUSE_END, on_pause_end, NULL))
		die("kgc_hook_set: %s", kgc_last_error());
}

static void finalization_fini(T *t)
{
	for (size_t i = 0; i < nfinals; i++)
		if (finals[i].w) {
			kgc_weak_free(t, finals[i].w);
			kgc_handle_free(t, finals[i].thunk);
		}
	free(finals);
	kgc_refqueue_destroy(final_q);
}

/*
 * Weak-key tables on ephemerons: (make-weak-table), (weak-table-set! tbl key
 * val), (weak-table-ref tbl key default), (weak-table-remove! tbl key),
 * (weak-table-count tbl). An entry is a kgc_ephemeron (key, value): the
 * value lives while the key is reachable from elsewhere, and a value that
 * refers to its own key (or to another entry's key that refers back) keeps
 * nothing alive. The table object (type weak-table) holds only a pointer to
 * its C side: buckets of entries chained by the key's identity hash.
 * Every ephemeron is attached to wt_q with its entry as the tag; a weak
 * reference to the table object is attached to the same queue with the
 * table as the tag. Draining the queue (between top-level forms and before
 * a count) unlinks the entries whose keys died and frees the tables that
 * died, with their entries: nothing is polled.
 */
struct wt_entry {
	struct wt_entry *next;
	struct wtable *tbl;
	uint32_t hash;
	kgc_ephemeron e;
};

struct wtable {
	struct wtable *prev, *next;	/* every table, for runtime_fini */
	kgc_weak self;			/* the table object, attached to wt_q */
	struct wt_entry **buckets;
	size_t nbuckets, count;
};

static kgc_type_id T_WTABLE;
enum { WTABLE_PTR = 8 };
static kgc_refqueue *wt_q;
static struct wtable *wt_all;
static pthread_mutex_t wt_mu = PTHREAD_MUTEX_INITIALIZER;	/* every table */

static struct wt_entry **wt_bucket(struct wtable *w, uint32_t hash)
{
	return &w->buckets[hash & (w->nbuckets - 1)];
}

static void wt_entry_unlink(T *t, struct wt_entry *en)
{
	struct wt_entry **pp = wt_bucket(en->tbl, en->hash);

	while (*pp != en)
		pp = &(*pp)->next;
	*pp = en->next;
	en->tbl->count--;
	kgc_ephemeron_free(t, en->e);	/* drops its queue entry if one is on the way */
	free(en);
}

static void wt_destroy(T *t, struct wtable *w)
{
	for (size_t b = 0; b < w->nbuckets; b++)
		while (w->buckets[b])
			wt_entry_unlink(t, w->buckets[b]);
	*(w->prev ? &w->prev->next : &wt_all) = w->next;
	if (w->next)
		w->next->prev = w->prev;
	kgc_weak_free(t, w->self);
	free(w->buckets);
	free(w);
}

/* What the collections so far cleared: dead keys' entries and dead tables. */
static void weak_tables_drain(T *t)
{
	struct kgc_ref_event ev;

	if (kgc_cleaners_drain(t))	/* everything cleared so far is enqueued */
		die("weak tables: %s", kgc_last_error());
	lock_managed(t, &wt_mu);
	while (kgc_refqueue_poll(wt_q, &ev, sizeof(ev)) == 0) {
		if (ev.kind == KGC_REF_EPHEMERON)
			wt_entry_unlink(t, (struct wt_entry *)(uintptr_t)ev.tag);
		else
			wt_destroy(t, (struct wtable *)(uintptr_t)ev.tag);
	}
	pthread_mutex_unlock(&wt_mu);
}

static struct wtable *wt_arg(obj o, const char *who)
{
	if (!is(o, T_WTABLE))
		die("%s: not a weak table", who);
	return KGC_FIELD(o, WTABLE_PTR, struct wtable *);
}

static obj key_arg(obj o, const char *who)
{
	if (!o || is_fix(o))
		die("%s: %s key has no identity (an ephemeron's key is an object)", who,
		    o ? "a fixnum" : "a ()");
	return o;
}

/* The entry for key (its hash given), or NULL; wt_mu held. A cleared entry
 * (its key dead, its event on the way) never matches a live key. */
static struct wt_entry *wt_find(T *t, struct wtable *w, obj key, uint32_t hash)
{
	for (struct wt_entry *en = *wt_bucket(w, hash); en; en = en->next) {
		obj k, v;

		if (en->hash == hash && !kgc_ephemeron_get(t, en->e, &k, &v) && k == key)
			return en;
	}
	return NULL;
}

/* The prologue of the operations on (tbl key ...) in *a: checks both, takes
 * wt_mu (may safepoint: the arguments are read from *a after it) and
 * returns the key's entry or NULL, with the table and the key's hash. */
struct wt_key {
	struct wtable *w;
	uint32_t hash;
};

static struct wt_entry *wt_lookup(T *t, obj *a, const char *who, struct wt_key *k)
{
	k->w = wt_arg(A0, who);
	k->hash = kgc_identity_hash(t, key_arg(A1, who));
	lock_managed(t, &wt_mu);
	return wt_find(t, k->w, A1, k->hash);
}

static void wt_grow(struct wtable *w)
{
	size_t n = w->nbuckets * 2;
	struct wt_entry **nb = calloc(n, sizeof(*nb));

	if (!nb)
		die("weak table: out of memory");
	for (size_t b = 0; b < w->nbuckets; b++)
		for (struct wt_entry *en = w->buckets[b], *next; en; en = next) {
			next = en->next;
			en->next = nb[en->hash & (n - 1)];
			nb[en->hash & (n - 1)] = en;
		}
	free(w->buckets);
	w->buckets = nb;
	w->nbuckets = n;
}

static obj p_make_weak_table(T *t, obj *a)
{
	struct wtable *w = calloc(1, sizeof(*w));
	obj o;

	if (!w || !(w->buckets = calloc(16, sizeof(*w->buckets))))
		die("make-weak-table: out of memory");
	w->nbuckets = 16;
	o = alloc(t, T_WTABLE);
	KGC_FIELD(o, WTABLE_PTR, struct wtable *) = w;
	if (!(w->self = kgc_weak_new(t, o)) || kgc_weak_set_queue(t, w->self, wt_q, (uintptr_t)w))
		die("make-weak-table: %s", kgc_last_error());
	lock_managed(t, &wt_mu);
	if ((w->next = wt_all))
		wt_all->prev = w;
	wt_all = w;
	pthread_mutex_unlock(&wt_mu);
	return o;
}

static obj p_weak_table_set(T *t, obj *a)
{
	struct wt_key k;
	struct wt_entry *en = wt_lookup(t, a, "weak-table-set!", &k);

	if (en) {			/* no way to swap a value: a new cell */
		kgc_ephemeron_free(t, en->e);
	} else {
		if (!(en = malloc(sizeof(*en))))
			die("weak-table-set!: out of memory");
		if (k.w->count >= k.w->nbuckets * 2)
			wt_grow(k.w);
		en->tbl = k.w;
		en->hash = k.hash;
		en->next = *wt_bucket(k.w, k.hash);
		*wt_bucket(k.w, k.hash) = en;
		k.w->count++;
	}
	if (!(en->e = kgc_ephemeron_new(t, A1, A2)) ||
	    kgc_ephemeron_set_queue(t, en->e, wt_q, (uintptr_t)en))
		die("weak-table-set!: %s", kgc_last_error());
	pthread_mutex_unlock(&wt_mu);
	return VOID_;
}

static obj p_weak_table_ref(T *t, obj *a)
{
	struct wt_key k;
	struct wt_entry *en = wt_lookup(t, a, "weak-table-ref", &k);
	obj key, v;
	int found = en && !kgc_ephemeron_get(t, en->e, &key, &v);

	pthread_mutex_unlock(&wt_mu);
	return found ? v : A2;
}

static obj p_weak_table_remove(T *t, obj *a)
{
	struct wt_key k;
	struct wt_entry *en = wt_lookup(t, a, "weak-table-remove!", &k);

	if (en)
		wt_entry_unlink(t, en);
	pthread_mutex_unlock(&wt_mu);
	return boolean(en != NULL);
}

/* Entries whose keys are alive as of the collections so far. */
static obj p_weak_table_count(T *t, obj *a)
{
	struct wtable *w = wt_arg(A0, "weak-table-count");
	size_t n;

	weak_tables_drain(t);		/* w stays: the table object is in *a */
	lock_managed(t, &wt_mu);
	n = w->count;
	pthread_mutex_unlock(&wt_mu);
	return mk_int(t, (int64_t)n);
}

static void weak_tables_init(void)
{
	if (kgc_refqueue_create(H, &wt_q))
		die("kgc_refqueue_create: %s", kgc_last_error());
}

static void weak_tables_fini(T *t)
{
	while (wt_all)
		wt_destroy(t, wt_all);
	kgc_refqueue_destroy(wt_q);
}

/*
 * (heap-histogram [type-name ...]): kgc_heap_histogram's table, like jmap
 * -histo (a full collection first, so only live objects count), printed
 * by kgc_histogram_print; with names (strings), only those types' rows and
 * their total.
 */
static int hist_wanted(obj names, const char *name)
{
	size_t n = strlen(name);

	for (; names; names = cdr(names))
		if (kgc_array_length(car(names)) == n && !memcmp(kgc_array_data(car(names)), name, n))
			return 1;
	return 0;
}

static obj p_heap_histogram(T *t, obj *a)
{
	struct kgc_histogram hg = { .size = sizeof(hg) }, sel = { .size = sizeof(sel) };

	for (obj p = *a; p; p = cdr(p))
		str_arg(car(p), "heap-histogram");
	if (kgc_heap_histogram(t, 0, &hg))	/* collects: *a is re-read below */
		die("heap-histogram: %s", kgc_last_error());
	if (!(sel.rows = calloc(hg.nrows + 1, sizeof(*sel.rows))))
		die("heap-histogram: out of memory");
	for (uint32_t i = 0; i < hg.nrows; i++)
		if (!*a || hist_wanted(*a, hg.rows[i].name)) {
			sel.rows[sel.nrows++] = hg.rows[i];
			sel.count += hg.rows[i].count;
			sel.bytes += hg.rows[i].bytes;
		}
	pthread_mutex_lock(&out_mu);
	kgc_histogram_print(&sel, 0, stdout);
	pthread_mutex_unlock(&out_mu);
	free(sel.rows);
	kgc_histogram_free(&hg);
	return VOID_;
}

static obj p_eq_hash(T *t, obj *a)
{
	if (!A0)
		return mk_int(t, 0);
	if (is_fix(A0))		/* an immediate has no identity: hash its value */
		return mk_int(t, (uint32_t)(((uint64_t)fix_val(A0) * 0x9e3779b97f4a7c15ull) >> 32) | 1);
	return mk_int(t, kgc_identity_hash(t, A0));
}

static void *sleep_fn(void *arg)
{
	struct timespec ts = { 0, *(long *)arg * 1000000L };

	nanosleep(&ts, NULL);
	return NULL;
}

static obj p_sleep(T *t, obj *a)
{
	long ms = int_val(A0);

	kgc_do_blocking(t, sleep_fn, &ms);	/* collections go on meanwhile */
	return VOID_;
}

/* --- threads: interpreters on the same heap, sharing the global environment */

#define MAX_THREADS 64
struct lthread {
	pthread_t pt;
	kgc_handle thunk;		/* the closure to run (a global root) */
	kgc_handle result;		/* set by the thread before it detaches, */
	obj fix_result;			/* or this, a fixnum (no handle holds one) */
	int joined;
};
static struct lthread lthreads[MAX_THREADS];
static int nlthreads;
static pthread_mutex_t threads_mu = PTHREAD_MUTEX_INITIALIZER;

static void run_thunk(T *t, struct lthread *lt)
{
	KGC_ROOTS(t, r, 1);	/* popped before the caller detaches */

	r[0] = apply(t, kgc_handle_get(lt->thunk), NULL);
	if (is_fix(r[0]))
		lt->fix_result = r[0];
	else if (!(lt->result = kgc_handle_new(t, r[0])))
		die("kgc_handle_new: %s", kgc_last_error());
}

static void *thread_main(void *arg)
{
	struct lthread *lt = arg;
	char name[32];
	T *t;
	int rc;

	snprintf(name, sizeof(name), "klisp-%d", (int)(lt - lthreads));
	if ((rc = kgc_thread_attach(H, name, &t)))
		die("kgc_thread_attach: %s", kgc_last_error());
	run_thunk(t, lt);
	__atomic_fetch_add(&allocs_total, allocs, __ATOMIC_RELAXED);
	if ((rc = kgc_thread_detach(t)))
		die("kgc_thread_detach: %s", kgc_last_error());
	return NULL;
}

static obj p_spawn(T *t, obj *a)
{
	struct lthread *lt;
	int i;

	if (!is(A0, T_CLOS))
		die("spawn: not a closure");
	lock_managed(t, &threads_mu);
	if ((i = nlthreads) == MAX_THREADS)
		die("spawn: too many threads");
	nlthreads++;
	pthread_mutex_unlock(&threads_mu);
	lt = &lthreads[i];
	if (!(lt->thunk = kgc_handle_new(t, A0)))
		die("kgc_handle_new: %s", kgc_last_error());
	if (pthread_create(&lt->pt, NULL, thread_main, lt))
		die("pthread_create failed");
	obj th = alloc(t, T_THREAD);
	KGC_FIELD(th, THREAD_IDX, int64_t) = i;
	return th;
}

static void *join_fn(void *arg)
{
	struct lthread *lt = arg;

	pthread_join(lt->pt, NULL);
	return NULL;
}

static obj join_thread(T *t, struct lthread *lt)
{
	obj res;

	/* pthread_join blocks: in native state, or a collection the other
	 * thread requests would wait for this one forever */
	kgc_do_blocking(t, join_fn, lt);
	lt->joined = 1;
	res = lt->result ? kgc_handle_get(lt->result) : lt->fix_result;
	kgc_handle_free(t, lt->result);
	kgc_handle_free(t, lt->thunk);
	return res;
}

static obj p_join(T *t, obj *a)
{
	struct lthread *lt;

	if (!is(A0, T_THREAD))
		die("join: not a thread");
	lt = &lthreads[KGC_FIELD(A0, THREAD_IDX, int64_t)];
	if (lt->joined)
		die("join: thread already joined");
	return join_thread(t, lt);
}

/* --- native calls through libkgc-native (kgc_native.h) */

/* critical native ([B)I: runs in native state with the array pinned */
static int32_t n_byte_sum(int32_t len, int8_t *bytes)
{
	int32_t s = 0;

	for (int32_t i = 0; i < len; i++)
		s += (uint8_t)bytes[i];
	return s;
}

/* regular native ([B)I: objects only through the env; a null throws */
static kgc_type_id T_EXC;
static int32_t n_length(kgc_env *env, kgc_jclass cls, kgc_jobject s)
{
	if (!s) {
		(*env)->ThrowNew(env, T_EXC, "native-length: null string");
		return -1;
	}
	return (int32_t)(*env)->GetArrayLength(env, s);
}

/* regular native ([B)[B: allocates its result through the env */
static kgc_jobject n_reverse(kgc_env *env, kgc_jclass cls, kgc_jobject s)
{
	size_t n = (*env)->GetArrayLength(env, s);
	char *buf = malloc(n + 1);
	kgc_jobject r;

	if (!buf)
		return NULL;
	(*env)->GetArrayRegion(env, s, 'B', 0, n, buf);
	for (size_t i = 0; i < n / 2; i++) {
		char c = buf[i];

		buf[i] = buf[n - 1 - i];
		buf[n - 1 - i] = c;
	}
	r = (*env)->NewArray(env, T_STR, n);	/* may collect: s is a local handle, still valid */
	if (r)
		(*env)->SetArrayRegion(env, r, 'B', 0, n, buf);
	free(buf);
	return r;
}

/* Not registered: found by lazy lookup of its JNI name (needs -rdynamic). */
KGC_NATIVE_EXPORT int32_t Java_klisp_Natives_fnv(kgc_env *env, kgc_jclass cls, kgc_jobject s)
{
	size_t n;
	uint8_t *p = (*env)->GetPrimitiveArrayCritical(env, s, &n);
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 16777619u;
	(*env)->ReleasePrimitiveArrayCritical(env, s, p, KGC_CRITICAL_ABORT);
	return (int32_t)(h & 0x7fffffff);
}

static const struct kgc_native_method natives[] = {
	{ "byteSum", "([B)I", (void *)n_byte_sum, KGC_NATIVE_STATIC | KGC_NATIVE_CRITICAL },
	{ "length", "([B)I", (void *)n_length, KGC_NATIVE_STATIC },
	{ "reverse", "([B)[B", (void *)n_reverse, KGC_NATIVE_STATIC },
};
static kgc_method *m_byte_sum, *m_length, *m_reverse, *m_fnv;
static union kgc_native_entry e_byte_sum;

static void natives_init(void)
{
	if (kgc_native_register(H, "klisp/Natives", natives, sizeof(natives) / sizeof(natives[0])) ||
	    kgc_native_method_find(H, "klisp/Natives", "byteSum", "([B)I",
				   KGC_NATIVE_STATIC | KGC_NATIVE_CRITICAL, &m_byte_sum) ||
	    kgc_native_method_find(H, "klisp/Natives", "length", "([B)I", KGC_NATIVE_STATIC, &m_length) ||
	    kgc_native_method_find(H, "klisp/Natives", "reverse", "([B)[B", KGC_NATIVE_STATIC, &m_reverse) ||
	    kgc_native_method_find(H, "klisp/Natives", "fnv", "([B)I", KGC_NATIVE_STATIC, &m_fnv) ||
	    /* the prepared entry: arguments in registers, no dispatch */
	    kgc_native_entry(m_byte_sum, KGC_NATIVE_SHAPE_L_I, &e_byte_sum))
		die("natives: %s", kgc_last_error());
}

static obj native_result(T *t, int rc, const char *who)
{
	if (rc == -EPROTO) {		/* the native threw: report, clear, yield #f */
		struct buf b = { 0 };
		const char *msg = kgc_native_exception_message(t);

		bprintf(&b, "; %s threw: ", who);
		if (msg)
			bput(&b, msg, strlen(msg));
		bput(&b, "\n", 1);
		emit(t, &b);
		kgc_native_exception_clear(t);
		return FALSE_;
	}
	if (rc)
		die("%s: %s", who, kgc_last_error());
	return NULL;
}

static obj p_byte_sum(T *t, obj *a)
{
	int32_t res;
	int rc = e_byte_sum.l_i(t, m_byte_sum, str_arg(A0, "byte-sum"), &res);

	if (rc)
		return native_result(t, rc, "byte-sum");
	return mk_int(t, res);
}

static obj call_native(T *t, obj *a, kgc_method *m, const char *who, int obj_result)
{
	union kgc_value arg = { .l = A0 }, res = { .i = 0 };
	int rc;

	if (A0)
		str_arg(A0, who);
	if ((rc = kgc_native_call(t, m, NULL, &arg, &res)))
		return native_result(t, rc, who);
	return obj_result ? res.l : mk_int(t, res.i);	/* res.l: raw, use before allocating */
}
static obj p_native_length(T *t, obj *a) { return call_native(t, a, m_length, "native-length", 0); }
static obj p_string_reverse(T *t, obj *a) { return call_native(t, a, m_reverse, "string-reverse", 1); }
static obj p_native_hash(T *t, obj *a) { return call_native(t, a, m_fnv, "native-hash", 0); }

/*
 * A deliberate rooting bug, for run-check.sh: a string held in a C local
 * across allocations. Under KGC_STALE_CHECK the collection that moves it
 * leaves its old copy PROT_NONE, and the read below faults with a message;
 * without the debug mode the read may well "work" on stale memory.
 */
static obj p_stale_demo(T *t, obj *a)
{
	obj s = mk_string(t, "moved", 5);

	for (int i = 0; i < 60; i++)
		cons(t, NULL, NULL);	/* safepoints: s may move, the local is not updated */
	return mk_int(t, (int64_t)kgc_array_length(s));	/* BUG: s is stale */
}

static const struct prim prims[] = {
	{ "+", 0, -1, p_add }, { "-", 1, -1, p_sub }, { "*", 0, -1, p_mul },
	{ "quotient", 2, 2, p_quotient }, { "remainder", 2, 2, p_remainder },
	{ "<", 1, -1, p_lt }, { ">", 1, -1, p_gt }, { "<=", 1, -1, p_le }, { ">=", 1, -1, p_ge },
	{ "=", 1, -1, p_numeq },
	{ "cons", 2, 2, p_cons }, { "car", 1, 1, p_car }, { "cdr", 1, 1, p_cdr },
	{ "set-car!", 2, 2, p_setcar }, { "set-cdr!", 2, 2, p_setcdr },
	{ "list", 0, -1, p_list }, { "length", 1, 1, p_length },
	{ "null?", 1, 1, p_nullp }, { "pair?", 1, 1, p_pairp }, { "eq?", 2, 2, p_eqp },
	{ "equal?", 2, 2, p_equalp }, { "not", 1, 1, p_not }, { "symbol?", 1, 1, p_symbolp },
	{ "string?", 1, 1, p_stringp }, { "number?", 1, 1, p_numberp },
	{ "vector?", 1, 1, p_vectorp }, { "procedure?", 1, 1, p_procp },
	{ "display", 1, 1, p_display }, { "write", 1, 1, p_write }, { "newline", 0, 0, p_newline },
	{ "make-vector", 1, 2, p_make_vector }, { "vector", 0, -1, p_vector },
	{ "vector-ref", 2, 2, p_vector_ref }, { "vector-set!", 3, 3, p_vector_set },
	{ "vector-length", 1, 1, p_vector_length },
	{ "string-length", 1, 1, p_string_length }, { "string-ref", 2, 2, p_string_ref },
	{ "string-append", 0, -1, p_string_append }, { "substring", 3, 3, p_substring },
	{ "make-string", 1, 2, p_make_string }, { "string=?", 2, 2, p_string_eq },
	{ "number->string", 1, 1, p_number_to_string },
	{ "string->symbol", 1, 1, p_string_to_symbol }, { "symbol->string", 1, 1, p_symbol_to_string },
	{ "apply", 2, 2, p_apply }, { "error", 0, -1, p_error },
	{ "gc", 0, 0, p_gc }, { "gc-young", 0, 0, p_gc_young }, { "gc-count", 0, 0, p_gc_count },
	{ "symbol-count", 0, 0, p_symbol_count }, { "int-boxes", 0, 0, p_int_boxes },
	{ "alloc-count", 0, 0, p_alloc_count }, { "eq-hash", 1, 1, p_eq_hash },
	{ "sleep", 1, 1, p_sleep }, { "spawn", 1, 1, p_spawn }, { "join", 1, 1, p_join },
	{ "byte-sum", 1, 1, p_byte_sum }, { "native-length", 1, 1, p_native_length },
	{ "string-reverse", 1, 1, p_string_reverse }, { "native-hash", 1, 1, p_native_hash },
	{ "%stale-demo", 0, 0, p_stale_demo },
	{ "finalize", 2, 2, p_finalize }, { "run-finalizers", 0, 0, p_run_finalizers },
	{ "gc-stats", 0, 0, p_gc_stats },
	{ "make-weak-table", 0, 0, p_make_weak_table }, { "weak-table-set!", 3, 3, p_weak_table_set },
	{ "weak-table-ref", 3, 3, p_weak_table_ref }, { "weak-table-remove!", 2, 2, p_weak_table_remove },
	{ "weak-table-count", 1, 1, p_weak_table_count }, { "heap-histogram", 0, -1, p_heap_histogram },
	{ NULL, 0, 0, NULL },
};

/* ------------------------------------------------------------------- setup */

static void types_init(void)
{
	static const struct { const char *name; uint32_t size, nrefs; const uint32_t *refs;
			      kgc_type_id *id; } tys[] = {
		{ "pair", 16, 2, pair_refs, &T_PAIR },
		{ "int", 8, 0, NULL, &T_INT },
		{ "symbol", 16, 1, sym_refs, &T_SYM },
		{ "closure", 24, 3, three_refs, &T_CLOS },
		{ "env", 24, 3, three_refs, &T_ENV },
		{ "primitive", 8, 0, NULL, &T_PRIM },
		{ "const", 8, 0, NULL, &T_CONST },
		{ "thread", 8, 0, NULL, &T_THREAD },
		{ "exception", 8, 0, NULL, &T_EXC },
		{ "weak-table", 8, 0, NULL, &T_WTABLE },
	};

	for (size_t i = 0; i < sizeof(tys) / sizeof(tys[0]); i++) {
		struct kgc_type_desc d = { .name = tys[i].name, .payload_size = tys[i].size,
					   .nrefs = tys[i].nrefs, .ref_offsets = tys[i].refs };

		if (kgc_type_register(H, &d, tys[i].id))
			die("kgc_type_register %s: %s", tys[i].name, kgc_last_error());
	}
}

static kgc_handle new_handle(T *t, obj o)
{
	kgc_handle h = kgc_handle_new(t, o);

	if (!h)
		die("kgc_handle_new: %s", kgc_last_error());
	return h;
}

static void runtime_init(T *t)
{
	KGC_ROOTS(t, r, 2);

	prim_table = prims;
	for (int i = 0; i < 3; i++) {
		obj c = alloc(t, T_CONST);

		KGC_FIELD(c, CONST_KIND, int64_t) = i;
		*(i == 0 ? &h_true : i == 1 ? &h_false : &h_void) = new_handle(t, c);
	}
	h_globals = new_handle(t, alloc_array(t, T_VEC, GLOBAL_BUCKETS));
	for (int i = 0; i < NSPECIAL; i++)
		h_special[i] = new_handle(t, intern(t, special_names[i], strlen(special_names[i])));
	for (int i = 0; prims[i].name; i++) {
		if (i >= (int)sizeof(prim_fix2))
			die("prim_fix2: too small for the primitives");
		for (int op = 1; op < NFIX2; op++)
			if (!strcmp(prims[i].name, fix2_names[op]))
				prim_fix2[i] = (uint8_t)op;
		r[0] = alloc(t, T_PRIM);
		KGC_FIELD(r[0], PRIM_IDX, int64_t) = i;
		r[1] = intern(t, prims[i].name, strlen(prims[i].name));
		global_define(t, r[1], r[0]);
	}
	natives_init();
}

static void runtime_fini(T *t)
{
	for (int i = 0; i < nlthreads; i++)
		if (!lthreads[i].joined)
			join_thread(t, &lthreads[i]);
	kgc_handle_free(t, h_true);
	kgc_handle_free(t, h_false);
	kgc_handle_free(t, h_void);
	kgc_handle_free(t, h_globals);
	for (int i = 0; i < NSPECIAL; i++)
		kgc_handle_free(t, h_special[i]);
	symtab_free(t);
	finalization_fini(t);
	weak_tables_fini(t);
}

static char *slurp(const char *path)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "r") : stdin;
	struct buf b = { 0 };
	char tmp[4096];
	size_t n;

	if (!f)
		die("%s: %s", path, strerror(errno));
	bput(&b, "", 0);
	while ((n = fread(tmp, 1, sizeof(tmp), f)) > 0)
		bput(&b, tmp, n);
	if (f != stdin)
		fclose(f);
	return b.p;
}

static void run(T *t, const char *text)
{
	struct reader rd = { text, 1 };
	KGC_ROOTS(t, r, 1);

	for (;;) {
		skip_ws(&rd);
		if (!*rd.p)
			return;
		r[0] = read_expr(t, &rd);
		eval(t, r[0], NULL);
		run_finalizers(t);	/* of what the collections so far found dead */
		weak_tables_drain(t);
	}
}

static void define_int(T *t, const char *def)
{
	const char *eq = strchr(def, '=');
	KGC_ROOTS(t, r, 2);

	if (!eq)
		die("-D %s: want name=integer", def);
	r[0] = mk_int(t, strtoll(eq + 1, NULL, 0));
	r[1] = intern(t, def, eq - def);	/* two statements: r[0] read after the allocation */
	global_define(t, r[1], r[0]);
}

/* --stats: a line for people, then one of key=value pairs (bench/klispbench). */
static void print_stats(void)
{
	struct kgc_stats st;
	uint64_t objs = __atomic_load_n(&allocs_total, __ATOMIC_RELAXED) + allocs;

	stats(&st);
	fprintf(stderr,
		"klisp: %llu young + %llu full collections, max pause %.2f ms, total %.1f ms; "
		"%.1f MB allocated, %.1f MB copied; %llu weak cells cleared; %llu critical sections; "
		"%llu integers boxed, %llu objects allocated\n"
		"klisp-stats young=%llu full=%llu pause_ns=%llu bytes=%llu objects=%llu int_boxes=%llu\n",
		(unsigned long long)st.young_gcs, (unsigned long long)st.full_gcs,
		st.pause_max_ns / 1e6, st.pause_total_ns / 1e6, st.bytes_allocated / 1048576.0,
		st.bytes_copied / 1048576.0, (unsigned long long)st.weak_cleared,
		(unsigned long long)st.critical_gets, (unsigned long long)int_boxes, (unsigned long long)objs,
		(unsigned long long)st.young_gcs, (unsigned long long)st.full_gcs,
		(unsigned long long)st.pause_total_ns, (unsigned long long)st.bytes_allocated,
		(unsigned long long)objs, (unsigned long long)int_boxes);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: klisp [-X key=value]... [-D name=integer]... [--stats] file.scm|-\n"
		"  -X  a collector option (kgc_options_set): -X heap_max=64m, -X KGC_LOG=gc\n"
		"  -D  define a global integer before the program runs\n"
		"  KGC_* environment variables apply first (kgc_options_init)\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct kgc_options opts;
	const char *file = NULL;
	int show_stats = 0, ndefs = 0;
	const char *defs[32];
	char *text;
	T *t;

	if (kgc_options_init(&opts))
		die("options: %s", kgc_last_error());
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-X") && i + 1 < argc) {
			char *kv = argv[++i], *eq = strchr(kv, '=');

			if (!eq)
				usage();
			*eq = 0;
			if (kgc_options_set(&opts, kv, eq + 1))
				die("-X %s: %s", kv, kgc_last_error());
		} else if (!strcmp(argv[i], "-D") && i + 1 < argc && ndefs < 32) {
			defs[ndefs++] = argv[++i];
		} else if (!strcmp(argv[i], "--stats")) {
			show_stats = 1;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			usage();
		} else {
			file = argv[i];
		}
	}
	if (!file)
		usage();
	text = slurp(file);
	opts.tag_mask = KLISP_TAG_MASK;	/* fixnums */
	if (kgc_heap_create(&opts, &H))
		die("kgc_heap_create: %s", kgc_last_error());
	types_init();
	finalization_init();
	weak_tables_init();
	if (kgc_thread_attach(H, "main", &t))
		die("kgc_thread_attach: %s", kgc_last_error());
	runtime_init(t);
	for (int i = 0; i < ndefs; i++)
		define_int(t, defs[i]);
	run(t, text);
	fflush(stdout);
	runtime_fini(t);
	if (show_stats)
		print_stats();
	free(text);
	if (kgc_thread_detach(t))
		die("kgc_thread_detach: %s", kgc_last_error());
	if (kgc_heap_destroy(H))
		die("kgc_heap_destroy: %s", kgc_last_error());
	return 0;
}
