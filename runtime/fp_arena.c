/* fp_arena.h. The only libc call is memset (guard bytes, checked build). */
#include "fp_arena.h"

#include <string.h>

#define FP_GUARD_BYTE 0xA5u

#ifdef FP_ARENA_CHECKED
static const int kChecked = 1;
#else
static const int kChecked = 0;
#endif

size_t fp_arena_required_bytes(const fp_plan* plan, uint32_t tier) {
  if (plan == NULL || tier >= plan->num_tiers) return 0;
  return plan->tier_arena_size[tier] + (kChecked ? FP_ARENA_GUARD_BYTES : 0u);
}

fp_status fp_arena_init(fp_arena* arena, const fp_plan* plan, uint32_t tier, void* buffer, size_t buffer_size) {
  uint32_t id;
  size_t alignment;
  if (arena == NULL) return FP_ERR_NULL;
  memset(arena, 0, sizeof *arena);
  if (plan == NULL || buffer == NULL) return FP_ERR_NULL;
  if (tier >= plan->num_tiers) return FP_ERR_NO_SUCH_TIER;
  if (buffer_size < fp_arena_required_bytes(plan, tier)) return FP_ERR_BUFFER_TOO_SMALL;
  alignment = plan->tier_alignment[tier];
  if (alignment > 1 && (size_t)((uintptr_t)buffer % alignment) != 0) return FP_ERR_MISALIGNED;
  for (id = 0; id < plan->num_tensors; ++id) {
    size_t offset = plan->tensor_offset[id];
    if (plan->tensor_tier[id] != tier) continue;
    if (alignment > 1 && offset % alignment != 0) return FP_ERR_BAD_PLAN;
    if (plan->tensor_size[id] > plan->tensor_aligned_size[id]) return FP_ERR_BAD_PLAN;
    if (offset > plan->tier_arena_size[tier] || plan->tensor_aligned_size[id] > plan->tier_arena_size[tier] - offset) {
      return FP_ERR_BAD_PLAN;
    }
  }
  arena->plan = plan;
  arena->tier = tier;
  arena->base = (unsigned char*)buffer;
  arena->size = plan->tier_arena_size[tier];
  arena->buffer_size = buffer_size;
  arena->step = 0;
  if (kChecked) memset(arena->base + arena->size, FP_GUARD_BYTE, FP_ARENA_GUARD_BYTES);
  return FP_OK;
}

void fp_arena_set_violation_handler(fp_arena* arena, fp_violation_fn handler, void* user) {
  if (arena == NULL) return;
  arena->on_violation = handler;
  arena->user = user;
}

static void Report(fp_arena* arena, fp_violation what, uint32_t tensor) {
  arena->violations += 1;
  if (arena->on_violation != NULL) arena->on_violation(arena->user, what, tensor, arena->step);
}

void* fp_tensor(fp_arena* arena, uint32_t id) {
  const fp_plan* plan;
  if (arena == NULL || arena->base == NULL) return NULL;
  plan = arena->plan;
  if (id >= plan->num_tensors) {
    if (kChecked) Report(arena, FP_VIOLATION_BAD_ID, id);
    return NULL;
  }
  if (plan->tensor_tier[id] != arena->tier) {
    if (kChecked) Report(arena, FP_VIOLATION_WRONG_TIER, id);
    return NULL;
  }
  if (kChecked && (arena->step < plan->tensor_first_step[id] || arena->step > plan->tensor_last_step[id])) {
    Report(arena, FP_VIOLATION_NOT_LIVE, id);
  }
  return arena->base + plan->tensor_offset[id];
}

int fp_arena_guard_intact(const fp_arena* arena) {
  size_t i;
  if (!kChecked || arena == NULL || arena->base == NULL) return 1;
  for (i = 0; i < FP_ARENA_GUARD_BYTES; ++i) {
    if (arena->base[arena->size + i] != FP_GUARD_BYTE) return 0;
  }
  return 1;
}

/* The tensor of the arena's tier that ends last among those live at the
 * current step: the one most likely to have run past the end. */
static uint32_t LastEndingLiveTensor(const fp_arena* arena) {
  const fp_plan* plan = arena->plan;
  uint32_t best = UINT32_MAX;
  size_t best_end = 0;
  uint32_t id;
  for (id = 0; id < plan->num_tensors; ++id) {
    size_t end;
    if (plan->tensor_tier[id] != arena->tier) continue;
    if (arena->step < plan->tensor_first_step[id] || arena->step > plan->tensor_last_step[id]) continue;
    end = plan->tensor_offset[id] + plan->tensor_size[id];
    if (best == UINT32_MAX || end > best_end) {
      best = id;
      best_end = end;
    }
  }
  return best;
}

void fp_step(fp_arena* arena, int32_t step) {
  if (arena == NULL || arena->base == NULL) return;
  if (kChecked && !fp_arena_guard_intact(arena)) {
    Report(arena, FP_VIOLATION_GUARD, LastEndingLiveTensor(arena));
    memset(arena->base + arena->size, FP_GUARD_BYTE, FP_ARENA_GUARD_BYTES);  /* Report each overrun once. */
  }
  arena->step = step;
}

const char* fp_status_name(fp_status status) {
  switch (status) {
    case FP_OK: return "ok";
    case FP_ERR_NULL: return "null arena, plan or buffer";
    case FP_ERR_NO_SUCH_TIER: return "the plan has no such tier";
    case FP_ERR_BUFFER_TOO_SMALL: return "buffer too small for the tier";
    case FP_ERR_MISALIGNED: return "buffer misaligned for the tier";
    case FP_ERR_BAD_PLAN: return "a tensor of the tier does not fit its arena";
  }
  return "unknown status";
}
