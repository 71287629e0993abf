/* fp_arena: serves an onnx-footprint plan from one preallocated buffer per
 * memory tier. C99, no malloc, no libc beyond memset; a firmware links it.
 *
 *   static const fp_plan plan = FP_PLAN_INITIALIZER;       (from the emitted header)
 *   static unsigned char ram[FP_ARENA_SIZE_RAM + FP_ARENA_GUARD_BYTES] __attribute__((aligned(64)));
 *   fp_arena arena;
 *   if (fp_arena_init(&arena, &plan, FP_TIER_RAM, ram, sizeof ram) != FP_OK) ...;
 *   float* x = (float*)fp_tensor(&arena, FP_T_INPUT3);
 *
 * Built with FP_ARENA_CHECKED defined, fp_step() marks progress, asking for a
 * tensor outside its live steps and a write past the tier's end (into guard
 * bytes) are reported through the violation handler. The struct layouts are
 * the same in both builds. */
#ifndef ONNX_FOOTPRINT_RUNTIME_FP_ARENA_H_
#define ONNX_FOOTPRINT_RUNTIME_FP_ARENA_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Guard bytes a checked build wants after each tier's arena; an unchecked
 * build accepts them too and ignores them. */
#define FP_ARENA_GUARD_BYTES 64u

/* fp_plan.tensor_sharing values. */
#define FP_SHARING_OWN 0u
#define FP_SHARING_ALIAS 1u
#define FP_SHARING_INPLACE 2u

/* The plan as tables, one entry per tier or per tensor (struct of arrays, so
 * that the emitted header needs no type of this library). */
typedef struct fp_plan {
  uint32_t num_tiers;                   /* Memory tiers with an arena. */
  const size_t* tier_arena_size;        /* Arena bytes of each tier. */
  const size_t* tier_alignment;         /* Offset and buffer alignment of each tier. */
  const char* const* tier_name;         /* Each tier's name in the device profile. */
  uint32_t num_tensors;                 /* Arena tensors; ids are 0..num_tensors-1. */
  const uint32_t* tensor_tier;          /* The tier holding each tensor. */
  const size_t* tensor_offset;          /* Its offset in that tier's arena. */
  const size_t* tensor_size;            /* Its exact bytes. */
  const size_t* tensor_aligned_size;    /* Its bytes rounded up to the tier's alignment. */
  const int32_t* tensor_first_step;     /* First step it is live (closed interval). */
  const int32_t* tensor_last_step;      /* Last step it is live. */
  const int32_t* tensor_shares_with;    /* The tensor whose bytes it occupies, or -1. */
  const uint8_t* tensor_sharing;        /* How: FP_SHARING_OWN, _ALIAS (a view, writes nothing) or _INPLACE. */
  const char* const* tensor_name;       /* Its ONNX value name. */
  uint32_t num_steps;                   /* Nodes in the schedule. */
  const char* const* node_name;         /* Node names in the order they run. */
} fp_plan;

typedef enum fp_status {
  FP_OK = 0,
  FP_ERR_NULL = 1,              /* A null arena, plan or buffer. */
  FP_ERR_NO_SUCH_TIER = 2,      /* tier >= plan->num_tiers. */
  FP_ERR_BUFFER_TOO_SMALL = 3,  /* Smaller than fp_arena_required_bytes(). */
  FP_ERR_MISALIGNED = 4,        /* Buffer address not a multiple of the tier's alignment. */
  FP_ERR_BAD_PLAN = 5           /* A tensor of the tier ends past the arena or is misaligned. */
} fp_status;

typedef enum fp_violation {
  FP_VIOLATION_NOT_LIVE = 1,    /* fp_tensor() outside the tensor's live steps. */
  FP_VIOLATION_GUARD = 2,       /* The guard bytes after the tier's arena were written. */
  FP_VIOLATION_BAD_ID = 3,      /* fp_tensor() with an id the plan does not have. */
  FP_VIOLATION_WRONG_TIER = 4   /* fp_tensor() for a tensor of another tier. */
} fp_violation;

/* Called by the checked build; `tensor` is the tensor concerned (for a
 * guard, the live tensor of the tier that ends last), or UINT32_MAX. */
typedef void (*fp_violation_fn)(void* user, fp_violation what, uint32_t tensor, int32_t step);

typedef struct fp_arena {
  const fp_plan* plan;            /* The plan served. */
  uint32_t tier;                  /* The tier this arena is. */
  unsigned char* base;            /* Start of the caller's buffer. */
  size_t size;                    /* The tier's arena bytes (guards excluded). */
  size_t buffer_size;             /* The caller's buffer bytes. */
  int32_t step;                   /* The step fp_step() last marked (0 after init). */
  fp_violation_fn on_violation;   /* Checked build: where violations go (may be null). */
  void* user;                     /* Handed to on_violation. */
  uint32_t violations;            /* Checked build: violations seen so far. */
} fp_arena;

/* Bytes fp_arena_init() needs for `tier`: its arena, plus the guard bytes in
 * a checked build; 0 for a tier the plan does not have. */
size_t fp_arena_required_bytes(const fp_plan* plan, uint32_t tier);

/* Binds `buffer` to the plan's `tier`. Refuses a null pointer, a buffer too
 * small or misaligned for the tier, and a plan whose tensors do not fit it;
 * the arena is left unusable (base null) on refusal. */
fp_status fp_arena_init(fp_arena* arena, const fp_plan* plan, uint32_t tier, void* buffer, size_t buffer_size);

/* Where violations go (checked build); null: only counted. */
void fp_arena_set_violation_handler(fp_arena* arena, fp_violation_fn handler, void* user);

/* The tensor's bytes: base + offset. Null for an id the plan does not have or
 * a tensor of another tier (also reported in a checked build). */
void* fp_tensor(fp_arena* arena, uint32_t id);

/* Marks that the node at `step` runs now. A checked build first checks the
 * guard bytes. */
void fp_step(fp_arena* arena, int32_t step);

/* 1 when the guard bytes are intact (always 1 in an unchecked build). */
int fp_arena_guard_intact(const fp_arena* arena);

/* A short English name of a status, for messages. */
const char* fp_status_name(fp_status status);

#ifdef __cplusplus
}
#endif

#endif /* ONNX_FOOTPRINT_RUNTIME_FP_ARENA_H_ */
