"""Normalisation removes what always differs and keeps what the code does."""

from __future__ import annotations

from tilescope.blast.normalize import normalize, renumber

TTIR_A = """#loc = loc("/home/a/k.py":10:0)
module {
  tt.func public @k(%arg0: !tt.ptr<f32> loc("/home/a/k.py":10:0)) attributes {noinline = false} {
    %c64_i32 = arith.constant 64 : i32 loc(#loc1)
    %0 = tt.get_program_id x : i32 loc(#loc2)
    %1 = arith.muli %0, %c64_i32 : i32 loc(#loc3)
    tt.return loc(#loc4)
  } loc(#loc)
} loc(#loc)
#loc1 = loc(unknown)
#loc2 = loc("/home/a/k.py":11:10)
"""

TTIR_B = """#loc = loc("/tmp/other/k.py":12:0)
module {
  tt.func public @k(%arg0: !tt.ptr<f32> loc("/tmp/other/k.py":12:0)) attributes {noinline = false} {
    %c64 = arith.constant 64 : i32 loc(#loc1)
    %pid = tt.get_program_id x : i32 loc(#loc2)
    %5 = arith.muli %pid, %c64 : i32 loc(#loc3)
    tt.return loc(#loc4)
  } loc(#loc)
} loc(#loc)
"""


def test_mlir_locations_and_names_do_not_count() -> None:
    assert normalize("ttir", TTIR_A) == normalize("ttir", TTIR_B)
    assert "loc" not in normalize("ttir", TTIR_A)


def test_mlir_real_change_remains() -> None:
    changed = TTIR_B.replace("arith.muli", "arith.addi")
    assert normalize("ttir", TTIR_A) != normalize("ttir", changed)


def test_ptx_register_numbering_and_debug_do_not_count() -> None:
    a = ".version 8.7\n.loc 1 10 3\n\tld.global.b32 %r12, [%rd3];  // load\n\tadd.s32 %r13, %r12, 1;\n"
    b = ".version 8.7\n.loc 1 99 1\n  ld.global.b32   %r40, [%rd9];\n  add.s32 %r41, %r40, 1;\n"
    assert normalize("ptx", a) == normalize("ptx", b)
    assert normalize("ptx", a) != normalize("ptx", b.replace("add.s32", "sub.s32"))
    assert normalize("ptx", a) != normalize("ptx", a.replace("8.7", "9.0"))  # a new PTX ISA is a real change


def test_llir_debug_and_local_names_do_not_count() -> None:
    head = "; ModuleID = '{m}'\nsource_filename = \"{m}\"\n"
    a = head.format(m="x") + "define void @k(ptr %0) {\n  %2 = load i32, ptr %0, !dbg !5\n}\n!5 = !{}\n"
    b = head.format(m="y") + "define void @k(ptr %a) {\n  %v = load i32, ptr %a, !dbg !9\n}\n!9 = !{}\n"
    assert normalize("llir", a) == normalize("llir", b)
    assert normalize("llir", a) != normalize("llir", a.replace("i32", "i64"))


def test_amdgcn_and_sass_noise() -> None:
    a = '\t.ident "AMD clang 19"\n.LBB0_3:\n\tv_add_f32 v1, v2, v3 ; comment\n\ts_branch .LBB0_3\n'
    b = '\t.ident "AMD clang 20"\n.LBB0_7:\n\tv_add_f32 v1, v2, v3\n\ts_branch .LBB0_7\n'
    assert normalize("amdgcn", a) == normalize("amdgcn", b)
    s1 = "        /*0040*/                   IMAD R1, R2, R3, RZ ;   /* 0x0000000302017224 */\n"
    s2 = "        /*0080*/                   IMAD R1, R2, R3, RZ ;   /* 0x000fe200078e02ff */\n"
    assert normalize("sass", s1) == normalize("sass", s2)


def test_renumber_keeps_order_information() -> None:
    assert renumber("%x %y %x", r"%[a-z]+", lambda m: "%v") == "%v1 %v2 %v1"
    assert renumber("%y %x %y", r"%[a-z]+", lambda m: "%v") == "%v1 %v2 %v1"
    assert renumber("%x %y %y", r"%[a-z]+", lambda m: "%v") != "%v1 %v2 %v1"
