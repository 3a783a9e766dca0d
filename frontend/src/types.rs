//! How naga types flatten into scalar components: a value of any type the
//! lowering supports is a list of 32-bit scalars in a fixed order (vectors
//! by component, matrices column-major, arrays by element, structs by
//! member). The evaluator and the lowering both index values this way.

use naga::{Module, TypeInner};

/// Number of scalar components of a value of type `t` (0 for types that
/// are not values: images, samplers, pointers).
pub fn size_of(module: &Module, t: &TypeInner) -> usize {
    match t {
        TypeInner::Scalar(_) | TypeInner::Atomic(_) => 1,
        TypeInner::Vector { size, .. } => *size as usize,
        TypeInner::Matrix { columns, rows, .. } => *columns as usize * *rows as usize,
        TypeInner::Array { base, size: naga::ArraySize::Constant(n), .. } => n.get() as usize * size_of(module, &module.types[*base].inner),
        TypeInner::Struct { members, .. } => members.iter().map(|m| size_of(module, &module.types[m.ty].inner)).sum(),
        _ => 0,
    }
}

/// The offset and size of element `index` of an aggregate of type `t`
/// (vector component, matrix column, array element, struct member).
pub fn element(module: &Module, t: &TypeInner, index: usize) -> Option<(usize, usize)> {
    match t {
        TypeInner::Vector { size, .. } => (index < *size as usize).then_some((index, 1)),
        TypeInner::Matrix { columns, rows, .. } => (index < *columns as usize).then_some((index * *rows as usize, *rows as usize)),
        TypeInner::Array { base, size: naga::ArraySize::Constant(n), .. } => {
            let s = size_of(module, &module.types[*base].inner);
            (index < n.get() as usize).then_some((index * s, s))
        }
        TypeInner::Struct { members, .. } => {
            let off: usize = members.iter().take(index).map(|m| size_of(module, &module.types[m.ty].inner)).sum();
            members.get(index).map(|m| (off, size_of(module, &module.types[m.ty].inner)))
        }
        _ => None,
    }
}

/// The type of element `index` of `t` (for pointers: of the pointee).
pub fn element_type<'a>(module: &'a Module, t: &'a TypeInner, index: usize) -> Option<TypeInner> {
    match t {
        TypeInner::Vector { scalar, .. } => Some(TypeInner::Scalar(*scalar)),
        TypeInner::Matrix { rows, scalar, .. } => Some(TypeInner::Vector { size: *rows, scalar: *scalar }),
        TypeInner::Array { base, .. } => Some(module.types[*base].inner.clone()),
        TypeInner::Struct { members, .. } => members.get(index).map(|m| module.types[m.ty].inner.clone()),
        TypeInner::Pointer { base, .. } => element_type(module, &module.types[*base].inner, index),
        TypeInner::ValuePointer { scalar, .. } => Some(TypeInner::Scalar(*scalar)),
        _ => None,
    }
}

/// The pointee of a pointer type, or the type itself.
pub fn pointee(module: &Module, t: &TypeInner) -> TypeInner {
    match t {
        TypeInner::Pointer { base, .. } => module.types[*base].inner.clone(),
        TypeInner::ValuePointer { size: Some(size), scalar, .. } => TypeInner::Vector { size: *size, scalar: *scalar },
        TypeInner::ValuePointer { size: None, scalar, .. } => TypeInner::Scalar(*scalar),
        other => other.clone(),
    }
}

/// Rows and columns of a matrix type; a vector is (size, 1).
pub fn shape(t: &TypeInner) -> (usize, usize) {
    match t {
        TypeInner::Matrix { columns, rows, .. } => (*rows as usize, *columns as usize),
        TypeInner::Vector { size, .. } => (*size as usize, 1),
        _ => (1, 1),
    }
}
