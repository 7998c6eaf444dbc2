//go:build amd64 && !purego && !noasm

#include "textflag.h"

// func dotsAVX2(q, m *float32, dims, rows int, out *float32)
//
// For each of rows rows of m (dims float32 each, consecutive), stores the dot
// product with q[:dims] into out. Four 8-lane FMA accumulators cover 32
// floats per step; then 8 at a time; then one at a time.
TEXT ·dotsAVX2(SB), NOSPLIT, $0-40
	MOVQ q+0(FP), SI
	MOVQ m+8(FP), DI
	MOVQ dims+16(FP), CX
	MOVQ rows+24(FP), R8
	MOVQ out+32(FP), R9
	TESTQ R8, R8
	JZ   done
	MOVQ CX, R10
	ANDQ $-32, R10 // dims rounded down to 32
	MOVQ CX, R11
	ANDQ $-8, R11  // dims rounded down to 8

row:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	XORQ   AX, AX

loop32:
	CMPQ        AX, R10
	JGE         loop8
	VMOVUPS     (SI)(AX*4), Y4
	VMOVUPS     32(SI)(AX*4), Y5
	VMOVUPS     64(SI)(AX*4), Y6
	VMOVUPS     96(SI)(AX*4), Y7
	VFMADD231PS (DI)(AX*4), Y4, Y0
	VFMADD231PS 32(DI)(AX*4), Y5, Y1
	VFMADD231PS 64(DI)(AX*4), Y6, Y2
	VFMADD231PS 96(DI)(AX*4), Y7, Y3
	ADDQ        $32, AX
	JMP         loop32

loop8:
	CMPQ        AX, R11
	JGE         reduce
	VMOVUPS     (SI)(AX*4), Y4
	VFMADD231PS (DI)(AX*4), Y4, Y0
	ADDQ        $8, AX
	JMP         loop8

reduce:
	VADDPS       Y1, Y0, Y0
	VADDPS       Y3, Y2, Y2
	VADDPS       Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0
	VHADDPS      X0, X0, X0
	VHADDPS      X0, X0, X0

loop1:
	CMPQ        AX, CX
	JGE         store
	VMOVSS      (SI)(AX*4), X4
	VFMADD231SS (DI)(AX*4), X4, X0
	INCQ        AX
	JMP         loop1

store:
	VMOVSS X0, (R9)
	ADDQ   $4, R9
	LEAQ   (DI)(CX*4), DI
	DECQ   R8
	JNZ    row

done:
	VZEROUPPER
	RET

// func dots16AVX2(q *float32, m *uint16, dims8, stride, rows int, out *float32)
//
// For each of rows rows of m (stride halves apart), stores the dot product
// of its first dims8 halves (a positive multiple of 8), widened by F16C, with
// q[:dims8] into out. Four 8-lane FMA accumulators cover 32 values per step,
// then 8 at a time.
TEXT ·dots16AVX2(SB), NOSPLIT, $0-48
	MOVQ q+0(FP), SI
	MOVQ m+8(FP), DI
	MOVQ dims8+16(FP), CX
	MOVQ stride+24(FP), DX
	MOVQ rows+32(FP), R8
	MOVQ out+40(FP), R9
	TESTQ R8, R8
	JZ   hdone
	MOVQ CX, R10
	ANDQ $-32, R10

hrow:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	XORQ   AX, AX

hloop32:
	CMPQ        AX, R10
	JGE         hloop8
	VCVTPH2PS   (DI)(AX*2), Y4
	VCVTPH2PS   16(DI)(AX*2), Y5
	VCVTPH2PS   32(DI)(AX*2), Y6
	VCVTPH2PS   48(DI)(AX*2), Y7
	VFMADD231PS (SI)(AX*4), Y4, Y0
	VFMADD231PS 32(SI)(AX*4), Y5, Y1
	VFMADD231PS 64(SI)(AX*4), Y6, Y2
	VFMADD231PS 96(SI)(AX*4), Y7, Y3
	ADDQ        $32, AX
	JMP         hloop32

hloop8:
	CMPQ        AX, CX
	JGE         hreduce
	VCVTPH2PS   (DI)(AX*2), Y4
	VFMADD231PS (SI)(AX*4), Y4, Y0
	ADDQ        $8, AX
	JMP         hloop8

hreduce:
	VADDPS       Y1, Y0, Y0
	VADDPS       Y3, Y2, Y2
	VADDPS       Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0
	VHADDPS      X0, X0, X0
	VHADDPS      X0, X0, X0
	VMOVSS       X0, (R9)
	ADDQ         $4, R9
	LEAQ         (DI)(DX*2), DI
	DECQ         R8
	JNZ          hrow

hdone:
	VZEROUPPER
	RET

// func toHalfF16C(src *float32, dst *uint16, n int)
//
// Rounds n float32 (a positive multiple of 8) to halves, ties to even
// (rounding control 0 in the immediate, whatever MXCSR says).
TEXT ·toHalfF16C(SB), NOSPLIT, $0-24
	MOVQ src+0(FP), SI
	MOVQ dst+8(FP), DI
	MOVQ n+16(FP), CX
	XORQ AX, AX

cloop:
	CMPQ      AX, CX
	JGE       cdone
	VMOVUPS   (SI)(AX*4), Y0
	VCVTPS2PH $0, Y0, (DI)(AX*2)
	ADDQ      $8, AX
	JMP       cloop

cdone:
	VZEROUPPER
	RET
