#!/usr/bin/env bash
# Emits the plan header of every fully sized model given and compiles it with
# runtime/fp_arena.h: in the default modes with
#   gcc -std=c99 -Wall -Wextra -Werror -pedantic, and g++ -std=c++17 -Wall -Wextra -Werror,
# in a file that serves the plan (FP_PLAN_INITIALIZER), and as C in a file
# that only includes it (its tables must not warn unused); with
# --device stm32h743 (several tiers, other names) as C99 serving it.
# --baseline headers differ only in numbers: plan_sweep_test renders them.
# Usage: compile_plan_headers.sh BINARY SOURCE_DIR MODEL_OR_DIR...
set -uo pipefail
binary="$1"; source_dir="$2"; shift 2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
models=$(for p in "$@"; do [ -e "$p" ] && find "$p" -name '*.onnx' -type f; done | sort)
cat > "$work/serve.c" <<'C'
#include "plan.h"
#include "runtime/fp_arena.h"
#ifdef __cplusplus
#include "runtime/fp_arena.hpp"  /* The C++17 face compiles beside it. */
#endif
static const fp_plan kPlan = FP_PLAN_INITIALIZER;
size_t ArenaOfFirstTier(void) { return kPlan.num_tiers > 0 ? kPlan.tier_arena_size[0] : 0u; }
C
printf '#include "plan.h"\nint Nothing(void);\n' > "$work/include_only.c"
compiled=0; failed=0
for model in $models; do
  for flags in "" "--device stm32h743"; do
    # shellcheck disable=SC2086
    "$binary" analyze "$model" $flags --time-limit 0 --schedule-time-limit 0 --output /dev/null \
      --emit-plan "$work/plan.h" 2> "$work/err"
    rc=$?
    if [ $rc -eq 2 ]; then
      grep -q "unsized" "$work/err" && continue   # No plan for a model that is not fully sized.
      echo "FAIL: $model $flags: exit 2: $(cat "$work/err")"; failed=$((failed + 1)); continue
    fi
    builds=("serve:gcc -x c -std=c99 -pedantic")
    [ -z "$flags" ] && builds+=("serve:g++ -x c++ -std=c++17" "include_only:gcc -x c -std=c99 -pedantic")
    for build in "${builds[@]}"; do   # Unused tables warn in C only.
      source=${build%%:*}; compiler=${build#*:}
      {
        # shellcheck disable=SC2086
        if ! $compiler -Wall -Wextra -Werror -I"$work" -I"$source_dir" -c "$work/$source.c" -o "$work/out.o" \
             2> "$work/cc_err"; then
          echo "FAIL: $model $flags: $compiler ($source):"; head -20 "$work/cc_err"; failed=$((failed + 1))
        fi
      }
    done
    compiled=$((compiled + 1))
    rm -f "$work/plan.h"
  done
done
echo "$compiled plan headers compiled as C99 and C++17, $failed failures"
[ "$failed" -eq 0 ] && [ "$compiled" -gt 0 ]
