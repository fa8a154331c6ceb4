/* tcu_launch_reduce: the switch from the runtime type to the per-type launchers. */
#include "cuda/cuda_internal.h"

#define TCU_DECL(n)                                                                          \
    cudaError_t tcu_launch_reduce_##n(unsigned mask, int omit_nan, const tcu_reduce_params *p, \
                                      int sm, cudaStream_t s);
TCU_DECL(i8) TCU_DECL(u8) TCU_DECL(i16) TCU_DECL(u16) TCU_DECL(i32) TCU_DECL(u32)
TCU_DECL(i64) TCU_DECL(u64) TCU_DECL(f32) TCU_DECL(f64)
#undef TCU_DECL

cudaError_t tcu_launch_reduce(tally_type type, unsigned mask, int omit_nan,
                              const tcu_reduce_params *p, int sm_count, cudaStream_t stream)
{
    switch (type) {
    case TALLY_I8: return tcu_launch_reduce_i8(mask, omit_nan, p, sm_count, stream);
    case TALLY_U8: return tcu_launch_reduce_u8(mask, omit_nan, p, sm_count, stream);
    case TALLY_I16: return tcu_launch_reduce_i16(mask, omit_nan, p, sm_count, stream);
    case TALLY_U16: return tcu_launch_reduce_u16(mask, omit_nan, p, sm_count, stream);
    case TALLY_I32: return tcu_launch_reduce_i32(mask, omit_nan, p, sm_count, stream);
    case TALLY_U32: return tcu_launch_reduce_u32(mask, omit_nan, p, sm_count, stream);
    case TALLY_I64: return tcu_launch_reduce_i64(mask, omit_nan, p, sm_count, stream);
    case TALLY_U64: return tcu_launch_reduce_u64(mask, omit_nan, p, sm_count, stream);
    case TALLY_F32: return tcu_launch_reduce_f32(mask, omit_nan, p, sm_count, stream);
    case TALLY_F64: return tcu_launch_reduce_f64(mask, omit_nan, p, sm_count, stream);
    }
    return cudaErrorInvalidValue;
}
