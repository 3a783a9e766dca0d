# expect: proven
# the compiler's output for lima-shared-entry-value.ir: one mul in $r0.x and $r0.y
shader gen
target lima-gp
stage vertex
form machine

b0:
    { mul1: mul ^uni.x.0, ^uni.x.0 ; uni.x: ld_const 0 ; st.x: st_reg $r0.x, ^mul1.0 ; st.y: st_reg $r0.y, ^mul1.0 }
    { }
    { }
    jmp b1

b1:
    { add0: mov ^reg1.x.0 ; reg1.x: ld_reg $r0.x }
    brnz ^add0.1, b2, b3

b2:
    end

b3:
    { add0: mov ^reg1.y.0 ; reg1.y: ld_reg $r0.y ; st.x: st_var 0, ^add0.0 }
    end
