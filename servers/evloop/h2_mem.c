#include "h2_mem.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Size classes: 64, 128, 256, 512, 1024 bytes, header included. Larger
 * blocks (nghttp2's 16 KiB frame buffer, big header tables) go to malloc:
 * they live as long as a session. */
#define H2_MEM_CLASSES 5
#define H2_MEM_MIN_SHIFT 6
/* Free blocks kept per class: enough for a turn of 128 streams on several
 * connections; the rest go back to malloc. */
#define H2_MEM_KEEP 4096
#define H2_MEM_LARGE 0xFFu

/* Every block starts with its class, so free() needs no size. 16 bytes keep
 * the payload aligned for anything nghttp2 stores. */
typedef union block_head {
    unsigned cls;
    max_align_t align;
} block_head;

typedef struct free_block {
    struct free_block *next;
} free_block;

typedef struct mem_classes {
    free_block *head[H2_MEM_CLASSES];
    unsigned count[H2_MEM_CLASSES];
} mem_classes;

static _Thread_local mem_classes pool;

static unsigned class_of(size_t total) {
    unsigned c = 0;
    size_t cap = (size_t)1 << H2_MEM_MIN_SHIFT;
    while (c < H2_MEM_CLASSES && cap < total) {
        c++;
        cap <<= 1;
    }
    return c < H2_MEM_CLASSES ? c : H2_MEM_LARGE;
}

static size_t class_size(unsigned c) {
    return (size_t)1 << (H2_MEM_MIN_SHIFT + c);
}

static void *mem_malloc(size_t size, void *ud) {
    (void)ud;
    size_t total = size + sizeof(block_head);
    unsigned c = class_of(total);
    block_head *b;
    if (c == H2_MEM_LARGE) {
        b = malloc(total);
    } else if (pool.head[c]) {
        free_block *f = pool.head[c];
        pool.head[c] = f->next;
        pool.count[c]--;
        b = (block_head *)f;
    } else {
        b = malloc(class_size(c));
    }
    if (!b) return NULL;
    b->cls = c;
    return b + 1;
}

static void mem_free(void *ptr, void *ud) {
    (void)ud;
    if (!ptr) return;
    block_head *b = (block_head *)ptr - 1;
    unsigned c = b->cls;
    if (c == H2_MEM_LARGE || pool.count[c] >= H2_MEM_KEEP) {
        free(b);
        return;
    }
    free_block *f = (free_block *)b;
    f->next = pool.head[c];
    pool.head[c] = f;
    pool.count[c]++;
}

static void *mem_calloc(size_t n, size_t size, void *ud) {
    if (size && n > SIZE_MAX / size) return NULL;
    void *p = mem_malloc(n * size, ud);
    if (p) memset(p, 0, n * size);
    return p;
}

static void *mem_realloc(void *ptr, size_t size, void *ud) {
    if (!ptr) return mem_malloc(size, ud);
    block_head *b = (block_head *)ptr - 1;
    size_t total = size + sizeof(block_head);
    if (b->cls == H2_MEM_LARGE) {
        /* Stays large (nghttp2 grows buffers, it does not shrink them). */
        block_head *nb = realloc(b, total);
        return nb ? nb + 1 : NULL;
    }
    if (total <= class_size(b->cls)) return ptr;
    void *np = mem_malloc(size, ud);
    if (!np) return NULL;
    memcpy(np, ptr, class_size(b->cls) - sizeof(block_head));
    mem_free(ptr, ud);
    return np;
}

nghttp2_mem *h2_mem(void) {
    static nghttp2_mem mem = {NULL, mem_malloc, mem_free, mem_calloc,
                              mem_realloc};
    return &mem;
}
