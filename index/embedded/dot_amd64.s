//go:build amd64 && !purego

#include "textflag.h"

// func dotI8AVX2(a, b *int8, n int) int32
//
// Each step sign-extends 16 int8s of a and of b to int16 (VPMOVSXBW),
// multiplies them and adds neighbouring products into 8 int32s
// (VPMADDWD: at most 2·128² per lane, no overflow), and accumulates; two
// accumulators take 32 components a step. The 8 lanes are summed at the end.
TEXT ·dotI8AVX2(SB), NOSPLIT, $0-28
	MOVQ a+0(FP), SI
	MOVQ b+8(FP), DI
	MOVQ n+16(FP), CX
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	SHRQ $5, CX
	JZ   sum

loop:
	VPMOVSXBW (SI), Y2
	VPMOVSXBW (DI), Y3
	VPMADDWD  Y3, Y2, Y2
	VPADDD    Y2, Y0, Y0
	VPMOVSXBW 16(SI), Y4
	VPMOVSXBW 16(DI), Y5
	VPMADDWD  Y5, Y4, Y4
	VPADDD    Y4, Y1, Y1
	ADDQ      $32, SI
	ADDQ      $32, DI
	DECQ      CX
	JNZ       loop

sum:
	VPADDD       Y1, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPADDD       X1, X0, X0
	VPSHUFD      $0x4E, X0, X1
	VPADDD       X1, X0, X0
	VPSHUFD      $0xB1, X0, X1
	VPADDD       X1, X0, X0
	VMOVD        X0, AX
	VZEROUPPER
	MOVL         AX, ret+24(FP)
	RET
