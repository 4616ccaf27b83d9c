//! CF-style use through the Rust API: arrays read into and written from buffers of another
//! numeric type (every pair of array and buffer types, both memory orders), and typed
//! attributes on arrays and groups.

use std::sync::Arc;
use zarr::dtype::ElementType::{
    self, Bool, Complex64, Float32, Float64, Int16, Int32, Int64, Int8, UInt16, UInt32, UInt64,
    UInt8,
};
use zarr::meta::Order;
use zarr::node::typed_attrs::{self, AttrKind};
use zarr::node::{Array, ArrayBuilder, Group, Mode};
use zarr::store::MemoryStore;
use zarr::Error;

const NUMERIC: [ElementType; 11] = [
    Bool, Int8, Int16, Int32, Int64, UInt8, UInt16, UInt32, UInt64, Float32, Float64,
];

fn array(store: &Arc<MemoryStore>, dtype: ElementType, format: u8) -> Array {
    let mut b = ArrayBuilder::new(vec![2, 3], dtype);
    b.chunks(vec![1, 2]).zarr_format(format.into()).unwrap();
    b.create(store.clone(), "a", Mode::Overwrite).unwrap()
}

fn f64s(values: &[f64]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_ne_bytes()).collect()
}

fn to_f64(elem: ElementType, bytes: &[u8]) -> Vec<f64> {
    let store = Arc::new(MemoryStore::new());
    let a = array(&store, elem, 2);
    a.write(&[0, 0], &[2, 3], elem, Order::C, bytes).unwrap();
    let mut out = vec![0u8; 48];
    a.read_as(&[0, 0], &[2, 3], Float64, Order::C, &mut out)
        .unwrap();
    out.chunks(8)
        .map(|c| f64::from_ne_bytes(c.try_into().unwrap()))
        .collect()
}

#[test]
fn every_array_type_reads_into_and_writes_from_every_buffer_type() {
    // Values every numeric type holds (bool: 0 and 1 only).
    let values = [0.0, 1.0, 1.0, 0.0, 1.0, 0.0];
    for stored in NUMERIC {
        for format in [2u8, 3] {
            let store = Arc::new(MemoryStore::new());
            let a = array(&store, stored, format);
            for buffer in NUMERIC {
                let mut src = vec![0u8; 6 * buffer.size()];
                // The values in the buffer's type, made through a float64 conversion.
                zarr::io::cast::convert(Float64, buffer, &f64s(&values), &mut src).unwrap();
                // C last, so the stored values below are in the order of `values`.
                for order in [Order::F, Order::C] {
                    a.write_from(&[0, 0], &[2, 3], buffer, order, &src).unwrap();
                    let mut back = vec![0xEEu8; src.len()];
                    a.read_as(&[0, 0], &[2, 3], buffer, order, &mut back)
                        .unwrap();
                    assert_eq!(back, src, "{stored:?} array, {buffer:?} buffer, {order:?}");
                }
                let mut stored_bytes = vec![0u8; 6 * stored.size()];
                a.read(&[0, 0], &[2, 3], stored, Order::C, &mut stored_bytes)
                    .unwrap();
                assert_eq!(
                    to_f64(stored, &stored_bytes),
                    values,
                    "{stored:?} <- {buffer:?}"
                );
            }
        }
    }
}

#[test]
fn out_of_range_reads_convert_all_and_writes_store_nothing() {
    let store = Arc::new(MemoryStore::new());
    let a = array(&store, Float64, 3);
    let data = f64s(&[1.5, -1.5, 300.0, f64::NAN, 127.9, -129.0]);
    a.write(&[0, 0], &[2, 3], Float64, Order::C, &data).unwrap();
    let mut i8s = vec![0u8; 6];
    let err = a
        .read_as(&[0, 0], &[2, 3], Int8, Order::C, &mut i8s)
        .unwrap_err();
    assert_eq!(
        err,
        Error::Range(
            "3 of 6 elements of float64 do not fit in int8 (the first at element 2)".into()
        )
    );
    assert_eq!(i8s, [1, 0xFF, 127, 0, 127, 0x80]);
    let b = {
        let mut b = ArrayBuilder::new(vec![2, 3], Int16);
        b.chunks(vec![1, 2]);
        b.create(store.clone(), "b", Mode::Overwrite).unwrap()
    };
    let err = b
        .write_from(&[0, 0], &[2, 3], Float64, Order::C, &data)
        .unwrap_err();
    assert!(matches!(err, Error::Range(_)), "{err}");
    let mut shorts = vec![0xAAu8; 12];
    b.read(&[0, 0], &[2, 3], Int16, Order::C, &mut shorts)
        .unwrap();
    assert_eq!(shorts, [0u8; 12], "nothing was written");
    // Types that are not numbers, and wrong buffer sizes, are refused before any I/O.
    let mut buf = vec![0u8; 48];
    let err = a
        .read_as(&[0, 0], &[2, 3], Complex64, Order::C, &mut buf)
        .unwrap_err();
    assert!(
        matches!(&err, Error::DtypeMismatch(m) if m.contains("complex64")),
        "{err}"
    );
    let err = a
        .read_as(&[0, 0], &[2, 3], Float32, Order::C, &mut buf)
        .unwrap_err();
    assert!(matches!(err, Error::BufferSize(_)), "{err}");
    let err = a
        .read_as(&[0, 0], &[2, 4], Float32, Order::C, &mut buf[..32])
        .unwrap_err();
    assert!(matches!(err, Error::OutOfBounds(_)), "{err}");
}

#[test]
fn typed_attributes_round_trip_on_arrays_and_groups() {
    let store = Arc::new(MemoryStore::new());
    let a = array(&store, Int16, 2);
    typed_attrs::set(&a, "scale_factor", &0.1f32).unwrap();
    typed_attrs::set(&a, "history", &"a \"b\"\n".to_string()).unwrap();
    typed_attrs::set(&a, "valid_range", &vec![-5i64, 5]).unwrap();
    assert_eq!(typed_attrs::get::<f32>(&a, "scale_factor").unwrap(), 0.1f32);
    assert_eq!(typed_attrs::get::<f64>(&a, "scale_factor").unwrap(), 0.1);
    assert_eq!(
        typed_attrs::get::<String>(&a, "history").unwrap(),
        "a \"b\"\n"
    );
    assert_eq!(
        typed_attrs::get::<Vec<i32>>(&a, "valid_range").unwrap(),
        [-5, 5]
    );
    assert_eq!(
        typed_attrs::kind(&a, "valid_range").unwrap(),
        (AttrKind::Integers, 2)
    );
    let err = typed_attrs::get::<f64>(&a, "history").unwrap_err();
    assert_eq!(
        err,
        Error::DtypeMismatch("attribute \"history\" is a string, not a number".into())
    );
    assert!(matches!(
        typed_attrs::get::<f64>(&a, "absent"),
        Err(Error::NotFound(_))
    ));
    let g = Group::open(store.clone(), "g", Mode::Overwrite).unwrap();
    typed_attrs::set(&g, "title", &"T".to_string()).unwrap();
    assert_eq!(typed_attrs::get::<String>(&g, "title").unwrap(), "T");
}
