#!/bin/sh
# `qcheck layout` command line (docs/spec/cli.md): apply/inverse round trip with the padded size, the
# padding rule, a bad shape (exit 2, message naming the rule), a bad size, list and --help.
set -u
Q=$1
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# sf128x4 on 3 x 5 scales: Rp*Cp = 128*8 = 1024 bytes, padding zero, round trip exact.
printf '\001\002\003\004\005\006\007\010\011\012\013\014\015\016\017' > "$T/in"
"$Q" layout apply --map sf128x4 --rows 3 --cols 5 "$T/in" "$T/out" || fail "apply sf128x4 exit $?"
[ "$(wc -c < "$T/out")" -eq 1024 ] || fail "sf128x4 3x5 output is $(wc -c < "$T/out") bytes, expected 1024"
# row 1 starts at byte 16 (docs/spec/layouts.md §1): bytes 16..19 = 06 07 08 09, byte 512 = col 4 of row 0 = 05
[ "$(od -An -tx1 -j16 -N4 "$T/out" | tr -d ' ')" = "06070809" ] || fail "row 1 not at offset 16"
[ "$(od -An -tx1 -j512 -N1 "$T/out" | tr -d ' ')" = "05" ] || fail "(0,4) not at offset 512"
[ "$(od -An -tx1 -j20 -N12 "$T/out" | tr -d ' 0')" = "" ] || fail "padding bytes are not zero"
"$Q" layout inverse --map sf128x4 --rows 3 --cols 5 "$T/out" "$T/back" || fail "inverse exit $?"
cmp -s "$T/in" "$T/back" || fail "inverse(apply(x)) != x"

# batched, with a parameter: aiter_shuffle_weight int4 on 2 x 16 x 32 bytes
head -c 1024 /dev/urandom > "$T/w"
"$Q" layout apply --map aiter_shuffle_weight --rows 16 --cols 32 --batch 2 --param int4=1 "$T/w" "$T/ws" ||
  fail "apply aiter exit $?"
"$Q" layout inverse --map aiter_shuffle_weight --rows 16 --cols 32 --batch 2 --param int4=1 "$T/ws" "$T/wb" ||
  fail "inverse aiter exit $?"
cmp -s "$T/w" "$T/wb" || fail "aiter round trip"

# a shape the map cannot take: exit 2 naming the rule
"$Q" layout apply --map aiter_shuffle_weight --rows 17 --cols 32 "$T/w" "$T/x" 2> "$T/err"
rc=$?
[ $rc -eq 2 ] || fail "rows 17 for aiter_shuffle_weight: exit $rc, expected 2"
grep -q "rows % 16" "$T/err" || fail "error does not name the rule: $(cat "$T/err")"
# wrong input size, unknown map, unknown parameter: exit 2
"$Q" layout apply --map sf128x4 --rows 4 --cols 5 "$T/in" "$T/x" 2> "$T/err"; [ $? -eq 2 ] || fail "size mismatch"
grep -q "needs 20" "$T/err" || fail "size error does not say the expected size: $(cat "$T/err")"
"$Q" layout apply --map nope --rows 1 --cols 1 "$T/in" "$T/x" 2>/dev/null; [ $? -eq 2 ] || fail "unknown map"
"$Q" layout apply --map sf128x4 --rows 3 --cols 5 --param bogus=1 "$T/in" "$T/x" 2> "$T/err"
[ $? -eq 2 ] && grep -q "unknown parameter 'bogus'" "$T/err" || fail "unknown parameter"
# strict UE8M0 packing rejects 3.0 (0x40400000), naming the element
printf '\000\000\200\077\000\000\100\100' > "$T/f"
"$Q" layout apply --map deepgemm_packed_ue8m0 --rows 1 --cols 2 "$T/f" "$T/x" 2> "$T/err"
[ $? -eq 2 ] && grep -q "element 1" "$T/err" || fail "strict pack: $(cat "$T/err")"

"$Q" layout list > "$T/list" || fail "list exit $?"
for m in sf128x4 sf8x4 trtllm_shuffle_a trtllm_shuffle_sf_a gated_reorder block_major_k deepgemm_mn_major \
         deepgemm_packed_ue8m0 aiter_shuffle_weight aiter_shuffle_scale triton_blackwell_scale \
         triton_hopper_mx_scale w13_interleave w13_swap amx_vnni2 amx_vnni4 marlin_fp8_weight; do
  grep -q "^$m" "$T/list" || fail "list misses $m"
done
"$Q" layout --help | grep -q "aiter_shuffle_scale" || fail "--help does not state the undefined-padding maps"
echo "PASS layout cli"
