/*
 * The header-name cache: raw field name -> its WSGI environ key
 * (HTTP_*, CONTENT_TYPE, CONTENT_LENGTH, or dropped), made once per
 * spelling and kept, with the last value seen under that name.
 */
#include "shim.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* hash_seed varies the header-name hash per process, so a client cannot
 * aim many names at one chain of the cache. */
static uint64_t hash_seed;

/* The raw name as it arrived (case kept: clients send one spelling) maps
 * to what the environ does with it. Bounded, so a client sending made-up
 * names cannot grow it; past the bound the key is built per request. */
#define CACHE_SLOTS 512
#define CACHE_MAX 256
static uint32_t cache_hash[CACHE_SLOTS];
static m0_header_key cache[CACHE_SLOTS];
static int cache_count;

static int equal_fold(const char *a, size_t n, const char *lower)
{
	if (strlen(lower) != n)
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = a[i];
		if (c >= 'A' && c <= 'Z')
			c = (char)(c + 32);
		if (c != lower[i])
			return 0;
	}
	return 1;
}

/* classify fills e (but name and hash) for a raw field name. */
static int classify(m0_header_key *e, const char *name, size_t n)
{
	e->cookie = 0;
	e->secret = 0;
	e->key = NULL;
	e->last_value = NULL;
	if (memchr(name, '_', n) != NULL) {
		/* Dropped: "X_Forwarded" and "X-Forwarded" would share a key, and a
		 * client could then shadow a proxy's header (what nginx and
		 * gunicorn >= 22 do too). */
		e->kind = M0_KEY_DROP;
		return 0;
	}
	if (equal_fold(name, n, "content-type")) {
		e->kind = M0_KEY_CONTENT_TYPE;
		return 0;
	}
	if (equal_fold(name, n, "content-length")) {
		e->kind = M0_KEY_CONTENT_LENGTH;
		return 0;
	}
	e->kind = M0_KEY_HTTP;
	e->cookie = equal_fold(name, n, "cookie");
	/* Credentials are not kept past their request by the value cache. */
	e->secret = e->cookie || equal_fold(name, n, "authorization") ||
	            equal_fold(name, n, "proxy-authorization");
	char stack[128];
	char *buf = n + 5 <= sizeof stack ? stack : malloc(n + 5);
	if (buf == NULL) {
		PyErr_NoMemory();
		return -1;
	}
	memcpy(buf, "HTTP_", 5);
	for (size_t i = 0; i < n; i++) {
		char c = name[i];
		if (c >= 'a' && c <= 'z')
			c = (char)(c - 32);
		else if (c == '-')
			c = '_';
		buf[5 + i] = c;
	}
	e->key = PyUnicode_DecodeLatin1(buf, (Py_ssize_t)(n + 5), NULL);
	if (buf != stack)
		free(buf);
	if (e->key == NULL)
		return -1;
	PyUnicode_InternInPlace(&e->key);
	return 0;
}

static uint64_t load64(const char *p)
{
	uint64_t w;
	memcpy(&w, p, 8);
	return w;
}

static uint32_t load32(const char *p)
{
	uint32_t w;
	memcpy(&w, p, 4);
	return w;
}

/* name_hash takes eight bytes a step (a byte-at-a-time FNV was most of the
 * environ build's own time in perf) and the tail as one overlapping load. */
static uint32_t name_hash(const char *p, size_t n)
{
	uint64_t h = hash_seed ^ (n * 0x9E3779B97F4A7C15ull);
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		h = (h ^ load64(p + i)) * 0xC2B2AE3D27D4EB4Full;
		h ^= h >> 29;
	}
	if (i < n) {
		uint64_t w;
		if (n >= 8)
			w = load64(p + n - 8);
		else if (n >= 4)
			w = load32(p) | (uint64_t)load32(p + n - 4) << 32;
		else
			w = (uint8_t)p[0] | (uint64_t)(uint8_t)p[n / 2] << 8 |
			    (uint64_t)(uint8_t)p[n - 1] << 16;
		h = (h ^ w) * 0xC2B2AE3D27D4EB4Full;
		h ^= h >> 29;
	}
	/* Never 0: 0 marks an empty slot. */
	return (uint32_t)(h ^ (h >> 32)) | 1;
}

/* lookup returns the entry for name: the cached one, or *spare filled for
 * this request only (then spare->key is the caller's to drop). Probing
 * runs over the dense hash array (2 KiB) and touches an entry only on a
 * hash match: the entries (16 KiB) missed the L1 cache under load. */
m0_header_key *m0_header_key_lookup(const char *name, size_t n, m0_header_key *spare)
{
	uint32_t h = name_hash(name, n);
	uint32_t i = h & (CACHE_SLOTS - 1);
	for (; cache_hash[i] != 0; i = (i + 1) & (CACHE_SLOTS - 1)) {
		m0_header_key *e = &cache[i];
		if (cache_hash[i] == h && e->len == n && memcmp(e->name, name, n) == 0)
			return e;
	}
	if (cache_count < CACHE_MAX) {
		m0_header_key *e = &cache[i];
		char *copy = malloc(n ? n : 1);
		if (copy != NULL) {
			if (classify(e, name, n) < 0) {
				free(copy);
				return NULL;
			}
			memcpy(copy, name, n);
			e->name = copy;
			e->len = (uint32_t)n;
			cache_hash[i] = h;
			cache_count++;
			return e;
		}
	}
	if (classify(spare, name, n) < 0)
		return NULL;
	spare->name = NULL;
	return spare;
}

void m0_header_keys_init(void)
{
	/* Not for secrecy: enough that the seed differs per process. */
	hash_seed = (uint64_t)(uintptr_t)&hash_seed * 0x9E3779B97F4A7C15ull ^
	            (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
}
