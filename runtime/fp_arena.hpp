// A C++17 header-only face of fp_arena.h: one object per tier's arena, typed
// tensor pointers, and a violation handler that may be any callable.
//
//   static const fp_plan plan = FP_PLAN_INITIALIZER;
//   alignas(64) static unsigned char ram[FP_ARENA_SIZE_RAM + FP_ARENA_GUARD_BYTES];
//   fp::Arena arena(plan, FP_TIER_RAM, ram, sizeof ram);
//   if (!arena.ok()) return arena.status();
//   arena.Step(0);
//   float* x = arena.Tensor<float>(FP_T_INPUT3);
#ifndef ONNX_FOOTPRINT_RUNTIME_FP_ARENA_HPP_
#define ONNX_FOOTPRINT_RUNTIME_FP_ARENA_HPP_

#include <cstddef>
#include <cstdint>

#include "runtime/fp_arena.h"

namespace fp {

class Arena {
 public:
  Arena(const fp_plan& plan, uint32_t tier, void* buffer, size_t buffer_size)
      : status_(fp_arena_init(&arena_, &plan, tier, buffer, buffer_size)) {}
  // The handler points into this object: it neither copies nor moves.
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;

  fp_status status() const { return status_; }
  bool ok() const { return status_ == FP_OK; }

  // The tensor's bytes as T*; null for an unknown id or another tier's tensor.
  template <typename T = void>
  T* Tensor(uint32_t id) {
    return static_cast<T*>(fp_tensor(&arena_, id));
  }
  // Its exact bytes (0 for an unknown id).
  size_t TensorBytes(uint32_t id) const {
    return arena_.plan != nullptr && id < arena_.plan->num_tensors ? arena_.plan->tensor_size[id] : 0;
  }

  void Step(int32_t step) { fp_step(&arena_, step); }
  int32_t step() const { return arena_.step; }
  uint32_t violations() const { return arena_.violations; }

  // `handler(fp_violation, uint32_t tensor, int32_t step)` is called by the
  // checked build; it must outlive the arena.
  template <typename Handler>
  void OnViolation(Handler& handler) {
    fp_arena_set_violation_handler(
        &arena_,
        [](void* user, fp_violation what, uint32_t tensor, int32_t step) {
          (*static_cast<Handler*>(user))(what, tensor, step);
        },
        &handler);
  }

  fp_arena& raw() { return arena_; }

 private:
  fp_arena arena_{};
  fp_status status_;
};

}  // namespace fp

#endif  // ONNX_FOOTPRINT_RUNTIME_FP_ARENA_HPP_
