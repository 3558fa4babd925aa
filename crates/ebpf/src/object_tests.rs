//! The compiled object is the same for every target (aarch64 robots included): built
//! for the BPF machine, with only BPF relocations, and calling exactly the helpers
//! that the feature probe checks for.

use std::collections::BTreeSet;

use object::elf::{EM_BPF, R_BPF_64_32, R_BPF_64_64};
use object::{Architecture, Endianness, Object, ObjectSection, RelocationFlags, SectionKind};

use crate::OBJECT;
use crate::features::HELPERS;

/// The BPF relocations LLVM emits besides those `object` names (the kernel's
/// Documentation/bpf/llvm_reloc.rst): `R_BPF_64_ABS64`, `R_BPF_64_ABS32`, `R_BPF_64_NODYLD32`.
const R_BPF_64_ABS64: u32 = 2;
const R_BPF_64_ABS32: u32 = 3;
const R_BPF_64_NODYLD32: u32 = 4;

/// `BPF_JMP | BPF_CALL`: the opcode of a call; with source register 0, a helper call
/// whose id is the immediate.
const BPF_CALL: u8 = 0x85;

fn parsed() -> object::File<'static> {
    object::File::parse(OBJECT).expect("the embedded object is ELF")
}

#[test]
fn the_object_is_for_the_bpf_machine_little_endian_and_64_bit() {
    let file = parsed();
    assert_eq!(file.architecture(), Architecture::Bpf, "built with clang -target bpf");
    assert_eq!(file.endianness(), Endianness::Little, "bpfel: the byte order of x86_64 and aarch64 hosts");
    assert!(file.is_64());
    let object::File::Elf64(elf) = &file else { panic!("not ELF64") };
    assert_eq!(elf.elf_header().e_machine.get(Endianness::Little), EM_BPF);
}

#[test]
fn every_relocation_is_a_bpf_relocation() {
    let allowed = [R_BPF_64_64, R_BPF_64_ABS64, R_BPF_64_ABS32, R_BPF_64_NODYLD32, R_BPF_64_32];
    let mut seen = 0;
    for section in parsed().sections() {
        for (offset, relocation) in section.relocations() {
            let RelocationFlags::Elf { r_type } = relocation.flags() else {
                panic!("{}+{offset:#x}: not an ELF relocation: {relocation:?}", section.name().unwrap_or("?"))
            };
            assert!(
                allowed.contains(&r_type),
                "{}+{offset:#x}: relocation type {r_type} is not a BPF one (a host's, from a non-BPF build?)",
                section.name().unwrap_or("?")
            );
            seen += 1;
        }
    }
    assert!(seen > 0, "the programs refer to their maps, so there are relocations to check");
}

#[test]
fn the_programs_call_exactly_the_helpers_the_feature_probe_checks() {
    let mut called = BTreeSet::new();
    for section in parsed().sections().filter(|s| s.kind() == SectionKind::Text) {
        let code = section.data().expect("section data");
        for insn in code.chunks_exact(8) {
            if insn[0] == BPF_CALL && insn[1] >> 4 == 0 {
                called.insert(i32::from_le_bytes(insn[4..8].try_into().expect("4 bytes")) as u32);
            }
        }
    }
    let probed: BTreeSet<u32> = HELPERS.iter().map(|&(_, helper, _)| helper as u32).collect();
    assert_eq!(called, probed, "helper ids called by the programs vs features::HELPERS");
}
