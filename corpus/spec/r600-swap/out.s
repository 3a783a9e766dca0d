shader channel_swap
target r600
stage vertex
form machine
# Both moves in one ALU group: every slot reads its operands before any slot
# writes, so the swap needs no temporary. Proven.
input $R1.x
input $R1.y

b0:
    { x: mov $R1.x, $R1.y ; y: mov $R1.y, $R1.x }   # one group: reads precede writes
    { cf: export 0, $R1.x }
    { cf: export 1, $R1.y }
    end
