/* Walks the schedule of testdata/mnist.onnx through fp_arena, with the plan
 * header onnx-footprint emitted for it at build time (mnist_plan.h). Each
 * node "runs" by filling its outputs with a byte of their id; a tensor that
 * owns its bytes must still hold them when it dies. A real runtime would
 * call its kernels where this fills bytes. Exit 0 when every tensor kept
 * its bytes and the checked library reported nothing. */
#include <stdio.h>
#include <string.h>

#include "mnist_plan.h"
#include "runtime/fp_arena.h"

static const fp_plan kPlan = FP_PLAN_INITIALIZER;

/* The arena, plus its guard bytes, plus room to align it by hand (C99 has
 * no alignas). */
static unsigned char storage[FP_ARENA_SIZE_RAM + FP_ARENA_GUARD_BYTES + FP_ARENA_ALIGN_RAM];

static unsigned violations = 0;

static void OnViolation(void* user, fp_violation what, uint32_t tensor, int32_t step) {
  (void)user;
  fprintf(stderr, "violation %d: tensor %s at step %ld\n", (int)what,
          tensor < FP_NUM_TENSORS ? fp_tensor_name[tensor] : "?", (long)step);
  ++violations;
}

/* True when no other tensor shares this one's bytes. */
static int OwnsItsBytes(uint32_t id) {
  uint32_t other;
  if (kPlan.tensor_sharing[id] != FP_SHARING_OWN) return 0;
  for (other = 0; other < FP_NUM_TENSORS; ++other) {
    if (kPlan.tensor_shares_with[other] == (int32_t)id) return 0;
  }
  return 1;
}

int main(void) {
  fp_arena arena;
  unsigned char* buffer = storage + (FP_ARENA_ALIGN_RAM - (size_t)((uintptr_t)storage % FP_ARENA_ALIGN_RAM)) %
                                        FP_ARENA_ALIGN_RAM;
  fp_status status = fp_arena_init(&arena, &kPlan, FP_TIER_RAM, buffer, FP_ARENA_SIZE_RAM + FP_ARENA_GUARD_BYTES);
  uint32_t step, id, lost = 0;
  if (status != FP_OK) {
    fprintf(stderr, "fp_arena_init: %s\n", fp_status_name(status));
    return 1;
  }
  fp_arena_set_violation_handler(&arena, OnViolation, NULL);
  for (step = 0; step < FP_NUM_STEPS; ++step) {
    fp_step(&arena, (int32_t)step);
    for (id = 0; id < FP_NUM_TENSORS; ++id) {
      if (kPlan.tensor_first_step[id] != (int32_t)step || kPlan.tensor_sharing[id] == FP_SHARING_ALIAS) continue;
      memset(fp_tensor(&arena, id), (int)(id & 0xffu), kPlan.tensor_size[id]);
    }
    printf("step %2u %-24s", (unsigned)step, fp_node_name[step]);
    for (id = 0; id < FP_NUM_TENSORS; ++id) {
      const unsigned char* bytes;
      size_t i;
      if (kPlan.tensor_last_step[id] != (int32_t)step || !OwnsItsBytes(id)) continue;
      bytes = (const unsigned char*)fp_tensor(&arena, id);
      for (i = 0; i < kPlan.tensor_size[id]; ++i) {
        if (bytes[i] != (id & 0xffu)) {
          fprintf(stderr, "tensor %s lost its bytes by step %u\n", fp_tensor_name[id], (unsigned)step);
          ++lost;
          break;
        }
      }
    }
    printf(" arena offset of %s: %lu\n", fp_tensor_name[FP_T_PLUS214_OUTPUT_0],
           (unsigned long)kPlan.tensor_offset[FP_T_PLUS214_OUTPUT_0]);
  }
  fp_step(&arena, (int32_t)FP_NUM_STEPS);
  printf("%u steps, %u tensors, arena %u bytes: %s\n", (unsigned)FP_NUM_STEPS, (unsigned)FP_NUM_TENSORS,
         (unsigned)FP_ARENA_SIZE_RAM, lost == 0 && violations == 0 ? "ok" : "FAILED");
  return lost == 0 && violations == 0 ? 0 : 1;
}
