# expect: proven
# the compiler's output for lima-equal-entry-components.ir: %1 in $r0.x, %0 in $r0.y
shader gen
target lima-gp
stage vertex
form machine

b0:
    { mul1: mov ^uni.x.0 ; add0: mov ^uni.x.0 ; uni.x: ld_const 0 ; st.x: st_reg $r0.x, ^add0.0 ; st.y: st_reg $r0.y, ^mul1.0 }
    { }
    { }
    jmp b1

b1:
    { add0: neg ^reg1.y.0 ; add1: add ^reg1.x.0, ^reg1.y.0 ; reg1.x: ld_reg $r0.x ; reg1.y: ld_reg $r0.y ; st.x: st_reg $r0.x, ^add1.0 ; st.z: st_reg $r2.z, ^add0.0 }
    { }
    { }
    end
