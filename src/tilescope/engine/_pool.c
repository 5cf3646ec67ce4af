/* A NumPy data allocator (NEP 49, PyDataMem_Handler version 1) that keeps freed large buffers for
 * the next array of about their size, so an engine launch's temporaries reuse memory whose pages
 * are already mapped instead of faulting in fresh pages (engine/pool.py installs it for a launch).
 *
 * Every block carries a 64-byte header with its capacity. Blocks of at least POOL_MIN bytes (where
 * NumPy's own allocator asks for huge pages; glibc serves smaller ones well) are rounded up to
 * POOL_ROUND; freed ones are kept (oldest evicted first) while the kept bytes stay
 * under the limit. Small blocks go straight to malloc. No Python C API: the handler struct is laid
 * out as NumPy's ndarraytypes.h declares it, and pool.py wraps it in a capsule. */

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define HEADER 64
#define POOL_MIN ((size_t)4 << 20)
#define POOL_ROUND ((size_t)64 << 10)
#define HUGE_MIN ((size_t)4 << 20)
#define SLOTS 64

typedef struct {
    void *ctx;
    void *(*malloc)(void *ctx, size_t size);
    void *(*calloc)(void *ctx, size_t nelem, size_t elsize);
    void *(*realloc)(void *ctx, void *ptr, size_t new_size);
    void (*free)(void *ctx, void *ptr, size_t size);
} Allocator;

typedef struct {
    char name[127];
    uint8_t version;
    Allocator allocator;
} Handler;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char *kept[SLOTS]; /* oldest first */
static int n_kept = 0;
static size_t kept_bytes = 0;
static size_t limit_bytes = (size_t)256 << 20;

static size_t capacity(char *block) { return *(size_t *)block; }

static size_t size_class(size_t size) {
    return size < POOL_MIN ? size : (size + POOL_ROUND - 1) / POOL_ROUND * POOL_ROUND;
}

static void drop(int i) {
    kept_bytes -= capacity(kept[i]);
    memmove(kept + i, kept + i + 1, (size_t)(n_kept - i - 1) * sizeof(char *));
    n_kept--;
}

/* A kept block of capacity within [cap, cap + cap / 8] (the tightest), removed from the pool. */
static char *take(size_t cap) {
    char *best = NULL;
    int at = -1;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < n_kept; i++) {
        size_t c = capacity(kept[i]);
        if (c >= cap && c <= cap + cap / 8 && (best == NULL || c < capacity(best))) {
            best = kept[i];
            at = i;
        }
    }
    if (at >= 0)
        drop(at);
    pthread_mutex_unlock(&lock);
    return best;
}

static char *fresh(size_t cap, int zeroed) {
    char *block = zeroed ? calloc(1, HEADER + cap) : malloc(HEADER + cap);
    if (block == NULL)
        return NULL;
    *(size_t *)block = cap;
    if (cap >= HUGE_MIN) { /* as NumPy's default allocator does for large arrays */
        uintptr_t start = ((uintptr_t)block + HEADER + 4095) & ~(uintptr_t)4095;
        uintptr_t end = ((uintptr_t)block + HEADER + cap) & ~(uintptr_t)4095;
        if (end > start)
            madvise((void *)start, end - start, MADV_HUGEPAGE);
    }
    return block;
}

static void *pool_malloc(void *ctx, size_t size) {
    (void)ctx;
    size_t cap = size_class(size ? size : 1);
    char *block = cap >= POOL_MIN ? take(cap) : NULL;
    if (block == NULL)
        block = fresh(cap, 0);
    return block ? block + HEADER : NULL;
}

static void *pool_calloc(void *ctx, size_t nelem, size_t elsize) {
    (void)ctx;
    if (elsize && nelem > (SIZE_MAX - HEADER - POOL_ROUND) / elsize)
        return NULL;
    size_t size = nelem * elsize;
    size_t cap = size_class(size ? size : 1);
    char *block = cap >= POOL_MIN ? take(cap) : NULL;
    if (block != NULL)
        memset(block + HEADER, 0, size);
    else
        block = fresh(cap, 1);
    return block ? block + HEADER : NULL;
}

static void pool_free(void *ctx, void *ptr, size_t size) {
    (void)ctx;
    (void)size;
    if (ptr == NULL)
        return;
    char *block = (char *)ptr - HEADER;
    size_t cap = capacity(block);
    if (cap < POOL_MIN || cap > limit_bytes) {
        free(block);
        return;
    }
    char *evicted[SLOTS];
    int n_evicted = 0;
    pthread_mutex_lock(&lock);
    while (n_kept > 0 && (n_kept == SLOTS || kept_bytes + cap > limit_bytes)) {
        evicted[n_evicted++] = kept[0];
        drop(0);
    }
    kept[n_kept++] = block;
    kept_bytes += cap;
    pthread_mutex_unlock(&lock);
    for (int i = 0; i < n_evicted; i++)
        free(evicted[i]);
}

static void *pool_realloc(void *ctx, void *ptr, size_t new_size) {
    if (ptr == NULL)
        return pool_malloc(ctx, new_size);
    size_t cap = capacity((char *)ptr - HEADER);
    if (new_size <= cap && size_class(new_size) == cap)
        return ptr;
    void *moved = pool_malloc(ctx, new_size);
    if (moved == NULL)
        return NULL;
    memcpy(moved, ptr, new_size < cap ? new_size : cap);
    pool_free(ctx, ptr, cap);
    return moved;
}

Handler tilescope_pool_handler = {
    "tilescope_pool", 1, {NULL, pool_malloc, pool_calloc, pool_realloc, pool_free}};

/* Bytes the pool keeps for reuse. */
size_t tilescope_pool_kept(void) {
    pthread_mutex_lock(&lock);
    size_t n = kept_bytes;
    pthread_mutex_unlock(&lock);
    return n;
}

/* Keep at most ``limit`` bytes from now on; 0 frees every kept block and keeps none. */
void tilescope_pool_limit(size_t limit) {
    char *evicted[SLOTS];
    int n_evicted = 0;
    pthread_mutex_lock(&lock);
    limit_bytes = limit;
    while (n_kept > 0 && kept_bytes > limit_bytes) {
        evicted[n_evicted++] = kept[0];
        drop(0);
    }
    pthread_mutex_unlock(&lock);
    for (int i = 0; i < n_evicted; i++)
        free(evicted[i]);
}
