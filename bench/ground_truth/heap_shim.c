// LD_PRELOAD shim: counts the live heap bytes of a process (malloc, calloc,
// realloc, free, posix_memalign, aligned_alloc, memalign, valloc; each block
// counted by malloc_usable_size, so the figure is what glibc really holds for
// it, padding included) and their peak.
//
// On SIGRTMIN+3 it writes "current peak\n" (decimal bytes) at the start of
// the file named by $FOOTPRINT_HEAP_REPORT, then resets the peak to the
// current figure: the driver (ort_driver.js) signals itself before and after
// each stage and reads the file. Built by bench/ground_truth/run.sh.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

// glibc's own allocator under the public names this file replaces: no dlsym,
// which itself allocates before it can be called.
extern void* __libc_malloc(size_t size);
extern void* __libc_calloc(size_t count, size_t size);
extern void* __libc_realloc(void* pointer, size_t size);
extern void __libc_free(void* pointer);
extern void* __libc_memalign(size_t alignment, size_t size);

static atomic_llong current_bytes;
static atomic_llong peak_bytes;
static int report_fd = -1;

static void Count(void* pointer) {
  if (pointer == NULL) return;
  long long now = atomic_fetch_add(&current_bytes, (long long)malloc_usable_size(pointer)) +
                  (long long)malloc_usable_size(pointer);
  long long peak = atomic_load(&peak_bytes);
  while (now > peak && !atomic_compare_exchange_weak(&peak_bytes, &peak, now)) {
  }
}

static void Uncount(void* pointer) {
  if (pointer != NULL) atomic_fetch_sub(&current_bytes, (long long)malloc_usable_size(pointer));
}

void* malloc(size_t size) {
  void* pointer = __libc_malloc(size);
  Count(pointer);
  return pointer;
}

void* calloc(size_t count, size_t size) {
  void* pointer = __libc_calloc(count, size);
  Count(pointer);
  return pointer;
}

void* realloc(void* old_pointer, size_t size) {
  size_t old_size = old_pointer != NULL ? malloc_usable_size(old_pointer) : 0;
  void* pointer = __libc_realloc(old_pointer, size);
  if (pointer == NULL && size != 0) return NULL;  // The old block is untouched.
  atomic_fetch_sub(&current_bytes, (long long)old_size);
  Count(pointer);
  return pointer;
}

void free(void* pointer) {
  Uncount(pointer);
  __libc_free(pointer);
}

void* memalign(size_t alignment, size_t size) {
  void* pointer = __libc_memalign(alignment, size);
  Count(pointer);
  return pointer;
}

void* aligned_alloc(size_t alignment, size_t size) { return memalign(alignment, size); }

void* valloc(size_t size) { return memalign((size_t)sysconf(_SC_PAGESIZE), size); }

int posix_memalign(void** out, size_t alignment, size_t size) {
  if (alignment < sizeof(void*) || (alignment & (alignment - 1)) != 0) return EINVAL;
  void* pointer = memalign(alignment, size);
  if (pointer == NULL && size != 0) return ENOMEM;
  *out = pointer;
  return 0;
}

// Async-signal-safe: formats by hand and writes with pwrite.
static char* FormatDecimal(long long value, char* end) {
  *--end = '\0';
  if (value < 0) value = 0;
  do {
    *--end = (char)('0' + value % 10);
    value /= 10;
  } while (value > 0);
  return end;
}

static void Report(int signal_number) {
  (void)signal_number;
  long long now = atomic_load(&current_bytes);
  long long peak = atomic_load(&peak_bytes);
  char line[64];
  char number[24];
  size_t length = 0;
  const char* text = FormatDecimal(now, number + sizeof(number));
  while (*text != '\0') line[length++] = *text++;
  line[length++] = ' ';
  text = FormatDecimal(peak, number + sizeof(number));
  while (*text != '\0') line[length++] = *text++;
  line[length++] = '\n';
  if (report_fd >= 0) {
    if (ftruncate(report_fd, 0) == 0 && pwrite(report_fd, line, length, 0) < 0) {
    }
  }
  atomic_store(&peak_bytes, now);
}

__attribute__((constructor)) static void InstallReporter(void) {
  const char* path = getenv("FOOTPRINT_HEAP_REPORT");
  if (path == NULL) return;
  report_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  struct sigaction action;
  memset(&action, 0, sizeof(action));
  action.sa_handler = Report;
  action.sa_flags = SA_RESTART;
  sigemptyset(&action.sa_mask);
  sigaction(SIGRTMIN + 3, &action, NULL);
}
