/* For ThreadSanitizer runs only (scripts/sanitize.sh tsan preloads it).
 *
 * libtbb takes its memory (task objects, each thread's scheduler data) from
 * libtbbmalloc when it finds it: first among the libraries already loaded,
 * by the name libtbbmalloc.so.2. tbbmalloc recycles memory freed by one
 * thread for another inside itself, unseen by TSan, which then reports the
 * new owner's first writes as racing with the old owner's last reads (seen
 * in gpu_call_test: a thread that had exited and one starting its first
 * parallel loop). Preloaded under that name, this library is found first
 * and passes the four calls libtbb makes to malloc and free, which TSan
 * intercepts: every reuse is then ordered by TSan's own allocator. */
#include <stdlib.h>

void* scalable_malloc(size_t size) { return malloc(size); }
void scalable_free(void* p) { free(p); }
void* scalable_aligned_malloc(size_t size, size_t alignment) {
  void* p = NULL;
  return posix_memalign(&p, alignment, size) == 0 ? p : NULL;
}
void scalable_aligned_free(void* p) { free(p); }
