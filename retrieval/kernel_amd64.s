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

// func sumAVX2(p *float32, n int) float32
TEXT ·sumAVX2(SB), NOSPLIT, $0-20
	MOVQ p+0(FP), SI
	MOVQ n+8(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	XORQ   AX, AX
	MOVQ   CX, R10
	ANDQ   $-32, R10
	MOVQ   CX, R11
	ANDQ   $-8, R11

sloop32:
	CMPQ   AX, R10
	JGE    sloop8
	VADDPS (SI)(AX*4), Y0, Y0
	VADDPS 32(SI)(AX*4), Y1, Y1
	VADDPS 64(SI)(AX*4), Y2, Y2
	VADDPS 96(SI)(AX*4), Y3, Y3
	ADDQ   $32, AX
	JMP    sloop32

sloop8:
	CMPQ   AX, R11
	JGE    sreduce
	VADDPS (SI)(AX*4), Y0, Y0
	ADDQ   $8, AX
	JMP    sloop8

sreduce:
	VADDPS       Y1, Y0, Y0
	VADDPS       Y3, Y2, Y2
	VADDPS       Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0
	VHADDPS      X0, X0, X0
	VHADDPS      X0, X0, X0

sloop1:
	CMPQ   AX, CX
	JGE    sdone
	VADDSS (SI)(AX*4), X0, X0
	INCQ   AX
	JMP    sloop1

sdone:
	VZEROUPPER
	MOVSS X0, ret+16(FP)
	RET
