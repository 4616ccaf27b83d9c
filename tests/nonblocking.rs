//! Non-blocking writes and appends: many requests in flight from several threads, waited
//! for in any order; submission order per handle; errors at wait with nothing torn and
//! later requests unaffected; the budget of bytes in flight; requests dropped unwaited;
//! flush waiting for them.

use crate::common;

use common::counting::Counting;
use serde_json::json;
use std::sync::{Arc, Mutex, MutexGuard};
use zarr::dtype::ElementType;
use zarr::meta::Order;
use zarr::node::pending::{self, Layout, Request};
use zarr::node::{Array, ArrayBuilder, Mode};
use zarr::store::{MemoryStore, Store};
use zarr::Error;

/// The budget and its counts are the process's: tests run one at a time.
fn serial() -> MutexGuard<'static, ()> {
    static SERIAL: Mutex<()> = Mutex::new(());
    let guard = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    pending::set_budget(0);
    guard
}

fn ints(values: impl IntoIterator<Item = i32>) -> Vec<u8> {
    values.into_iter().flat_map(i32::to_ne_bytes).collect()
}

/// A v3 array of int32 of `shape`, chunks of `chunks`, fill value -1, zstd.
fn array(store: Arc<dyn Store>, shape: Vec<u64>, chunks: Vec<u64>) -> Arc<Array> {
    let mut builder = ArrayBuilder::new(shape, ElementType::Int32);
    builder.zarr_format(3).unwrap();
    builder
        .chunks(chunks)
        .fill_value_json(json!(-1))
        .compressor(json!({"id": "zstd", "level": 1}));
    Arc::new(builder.create(store, "a", Mode::Overwrite).unwrap())
}

fn read_all(array: &Array) -> Vec<u8> {
    let shape = array.metadata().shape.clone();
    let n: u64 = shape.iter().product();
    let mut out = vec![0u8; n as usize * 4];
    array
        .read(
            &vec![0; shape.len()],
            &shape,
            ElementType::Int32,
            Order::C,
            &mut out,
        )
        .unwrap();
    out
}

fn write(array: &Arc<Array>, start: u64, values: Vec<u8>) -> Request {
    let count = (values.len() / 4) as u64;
    array
        .write_async(
            vec![start],
            vec![count],
            ElementType::Int32,
            Layout::Dense(Order::C),
            Box::new(values),
        )
        .unwrap()
}

#[test]
fn requests_from_several_threads_land_exactly_waited_in_any_order() {
    let _serial = serial();
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let a = array(store.clone(), vec![64, 16], vec![8, 8]);
    let threads: Vec<_> = (0..4u64)
        .map(|t| {
            let a = a.clone();
            std::thread::spawn(move || {
                // Thread t writes rows 16t..16t+16, one row per request.
                (16 * t..16 * t + 16)
                    .map(|row| {
                        let values = ints((0..16).map(|c| (row * 100 + c) as i32));
                        a.write_async(
                            vec![row, 0],
                            vec![1, 16],
                            ElementType::Int32,
                            Layout::Dense(Order::C),
                            Box::new(values),
                        )
                        .unwrap()
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let mut requests: Vec<Request> = threads
        .into_iter()
        .flat_map(|t| t.join().unwrap())
        .collect();
    // Waited for last first, then every other one, then the rest.
    requests.reverse();
    for r in requests.iter().step_by(2) {
        r.wait().unwrap();
    }
    for r in &requests {
        r.wait().unwrap();
        assert_eq!(r.test(), Some(Ok(())));
    }
    let other = Array::open(store, "a", Mode::Read).unwrap();
    assert_eq!(
        read_all(&other),
        ints((0..64).flat_map(|r| (0..16).map(move |c| r * 100 + c)))
    );
}

#[test]
fn overlapping_writes_and_strided_writes_apply_in_submission_order() {
    let _serial = serial();
    let a = array(Arc::new(MemoryStore::new()), vec![30], vec![7]);
    let mut requests = Vec::new();
    for i in 0..40 {
        // Each write covers [i % 10, i % 10 + 20) with the value i.
        requests.push(write(&a, i % 10, ints(std::iter::repeat_n(i as i32, 20))));
    }
    // A strided write last: elements 0, 2, ..., 28 of a buffer of 30 into [0, 15).
    let strided = ints((0..30).map(|v| 1000 + v));
    requests.push(
        a.write_async(
            vec![0],
            vec![15],
            ElementType::Int32,
            Layout::Strided(vec![2]),
            Box::new(strided),
        )
        .unwrap(),
    );
    requests.last().unwrap().wait().unwrap();
    for r in &requests {
        assert_eq!(r.test(), Some(Ok(())), "done in order: the last is done");
    }
    // What a blocking sequence of the same writes leaves.
    let mut expected = vec![-1i32; 30];
    for i in 0..40usize {
        expected[i % 10..i % 10 + 20].fill(i as i32);
    }
    for (k, e) in expected.iter_mut().take(15).enumerate() {
        *e = 1000 + 2 * k as i32;
    }
    assert_eq!(read_all(&a), ints(expected));
}

#[test]
fn requests_on_different_chunks_run_at_once_and_on_shared_chunks_in_order() {
    let _serial = serial();
    for sharded in [false, true] {
        let counting = Arc::new(Counting::default());
        // Every chunk (shard) write takes 100 ms: writes that may run at once do.
        *counting.slow.lock().unwrap() = Some("a/c".into());
        let store: Arc<dyn Store> = counting.clone();
        let mut builder = ArrayBuilder::new(vec![64], ElementType::Int32);
        builder.zarr_format(3).unwrap();
        builder.chunks(vec![8]).fill_value_json(json!(-1));
        if sharded {
            builder.shard_shape(vec![16]);
        }
        let a = Arc::new(builder.create(store.clone(), "a", Mode::Overwrite).unwrap());
        let mut expected = vec![-1i32; 64];
        let mut requests = Vec::new();
        // Writes `len` values `value` from `start`, and applies it to `expected`.
        let submit = |start: u64, len: u64, value: i32, expected: &mut Vec<i32>| {
            expected[start as usize..(start + len) as usize].fill(value);
            write(&a, start, ints(std::iter::repeat_n(value, len as usize)))
        };
        // One write per chunk, each storing one chunk (shard): two at once at least.
        for k in 0..8 {
            requests.push(submit(k * 8, 8, k as i32, &mut expected));
        }
        for r in requests.drain(..) {
            r.wait().unwrap();
        }
        if zarr::io::pool::num_threads() >= 2 {
            let most = counting
                .most_setting
                .load(std::sync::atomic::Ordering::SeqCst);
            assert!(most >= 2, "sharded: {sharded}: writes ran one at a time");
        }
        // Rounds of one write per chunk, then writes across chunk (shard) boundaries that
        // must land after the writes they overlap and before the later ones.
        for round in 1..4 {
            for k in 0..8 {
                requests.push(submit(k * 8, 8, round * 100 + k as i32, &mut expected));
            }
            requests.push(submit(
                4 + (round - 1) as u64 * 16,
                24,
                1000 + round,
                &mut expected,
            ));
        }
        // An append, then writes into the new chunk and an old one: after the append.
        requests.push(
            a.append_async(
                0,
                vec![8],
                ElementType::Int32,
                Layout::Dense(Order::C),
                Box::new(ints(std::iter::repeat_n(7, 8))),
            )
            .unwrap(),
        );
        expected.extend(std::iter::repeat_n(7, 8));
        requests.push(submit(66, 3, 5000, &mut expected));
        requests.push(submit(60, 8, 6000, &mut expected));
        for r in &requests {
            r.wait().unwrap();
        }
        a.flush().unwrap();
        let other = Array::open(store, "a", Mode::Read).unwrap();
        assert_eq!(read_all(&other), ints(expected), "sharded: {sharded}");
    }
}

#[test]
fn a_failing_request_reports_at_wait_stores_nothing_torn_and_later_ones_run() {
    let _serial = serial();
    let counting = Arc::new(Counting::default());
    let store: Arc<dyn Store> = counting.clone();
    let a = array(store.clone(), vec![40], vec![10]);
    let first = write(&a, 0, ints(0..40));
    first.wait().unwrap();
    *counting.refuse.lock().unwrap() = Some("a/c/2".into());
    let failing = write(&a, 0, ints(100..140));
    let later = write(&a, 0, ints(200..210));
    // An out-of-bounds region fails at wait too, changing nothing.
    let outside = write(&a, 35, ints(0..10));
    later.wait().unwrap();
    let e = failing.wait().unwrap_err();
    assert!(e.to_string().contains("refused by the test"), "{e}");
    assert_eq!(
        failing.wait().unwrap_err(),
        e,
        "the same outcome every time"
    );
    assert!(matches!(outside.wait(), Err(Error::OutOfBounds(_))));
    *counting.refuse.lock().unwrap() = None;
    // Every chunk holds one write's values whole: chunk 0 the later write's, chunk 2 the
    // first's, chunks 1 and 3 the first's or the failing one's (as a blocking write that
    // fails leaves them).
    let got = read_all(&a);
    let chunk = |c: usize| &got[c * 40..c * 40 + 40];
    assert_eq!(chunk(0), ints(200..210));
    assert_eq!(chunk(2), ints(20..30));
    for c in [1, 3] {
        let (old, new) = (c as i32 * 10, 100 + c as i32 * 10);
        assert!(
            chunk(c) == ints(old..old + 10) || chunk(c) == ints(new..new + 10),
            "chunk {c} torn: {:?}",
            chunk(c)
        );
    }
}

#[test]
fn the_budget_bounds_the_bytes_in_flight() {
    let _serial = serial();
    let counting = Arc::new(Counting::default());
    let store: Arc<dyn Store> = counting.clone();
    let a = array(store.clone(), vec![8 * 1024], vec![1024]);
    *counting.slow.lock().unwrap() = Some("a/c/".into());
    // Three requests of 4 KiB fit; the others wait at submission until some are done.
    pending::set_budget(3 * 4096);
    pending::in_flight(true);
    let submitters: Vec<_> = (0..2u64)
        .map(|t| {
            let a = a.clone();
            std::thread::spawn(move || {
                (0..4u64)
                    .map(|k| {
                        let chunk = t * 4 + k;
                        write(
                            &a,
                            chunk * 1024,
                            ints((0..1024).map(|v| (chunk * 10000 + v) as i32)),
                        )
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let requests: Vec<Request> = submitters
        .into_iter()
        .flat_map(|t| t.join().unwrap())
        .collect();
    for r in &requests {
        r.wait().unwrap();
    }
    let (now, peak) = pending::in_flight(false);
    assert_eq!(now, 0);
    assert!(peak <= 3 * 4096, "peak {peak} above the budget");
    assert!(
        peak >= 2 * 4096,
        "peak {peak}: requests were not in flight together"
    );
    // A request larger than the whole budget is refused at once.
    let e = a
        .write_async(
            vec![0],
            vec![4096],
            ElementType::Int32,
            Layout::Dense(Order::C),
            Box::new(vec![0u8; 16384]),
        )
        .unwrap_err();
    assert!(matches!(e, Error::InvalidArg(_)), "{e}");
    pending::set_budget(0);
    *counting.slow.lock().unwrap() = None;
    assert_eq!(
        read_all(&a),
        ints((0..8).flat_map(|c| (0..1024).map(move |v| c * 10000 + v)))
    );
}

#[test]
fn dropped_requests_still_run_and_flush_waits_for_them() {
    let _serial = serial();
    let counting = Arc::new(Counting::default());
    let store: Arc<dyn Store> = counting.clone();
    let a = array(store.clone(), vec![20], vec![10]);
    *counting.slow.lock().unwrap() = Some("a/c/".into());
    drop(write(&a, 0, ints(0..10)));
    let kept = write(&a, 10, ints(10..20));
    assert_eq!(kept.test(), None, "a slow store keeps it in flight");
    a.flush().unwrap();
    assert_eq!(kept.test(), Some(Ok(())), "flush waited");
    *counting.slow.lock().unwrap() = None;
    let other = Array::open(store.clone(), "a", Mode::Read).unwrap();
    assert_eq!(read_all(&other), ints(0..20));
    // Dropping the last handle with a request in flight: the request holds the array.
    drop(write(&a, 0, ints(50..60)));
    drop(a);
    pending::wait_all_requests();
    let other = Array::open(store, "a", Mode::Read).unwrap();
    assert_eq!(read_all(&other), ints((50..60).chain(10..20)));
}

#[test]
fn appends_apply_in_submission_order_streamed_or_not() {
    let _serial = serial();
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    for sharded in [false, true] {
        let mut builder = ArrayBuilder::new(vec![0, 6], ElementType::Int32);
        builder.zarr_format(3).unwrap();
        builder.chunks(vec![1, 3]).fill_value_json(json!(0));
        if sharded {
            builder.shard_shape(vec![4, 6]);
        }
        let a = Arc::new(builder.create(store.clone(), "g", Mode::Overwrite).unwrap());
        let requests: Vec<Request> = (0..11)
            .map(|t| {
                a.append_async(
                    0,
                    vec![1, 6],
                    ElementType::Int32,
                    Layout::Dense(Order::C),
                    Box::new(ints((0..6).map(|v| t * 10 + v + 1))),
                )
                .unwrap()
            })
            .collect();
        requests[10].wait().unwrap();
        a.flush().unwrap();
        let other = Array::open(store.clone(), "g", Mode::Read).unwrap();
        assert_eq!(other.metadata().shape, vec![11, 6], "sharded: {sharded}");
        assert_eq!(
            read_all(&other),
            ints((0..11).flat_map(|t| (0..6).map(move |v| t * 10 + v + 1))),
            "sharded: {sharded}"
        );
    }
}

#[test]
fn a_submission_waiting_when_the_budget_drops_below_it_is_refused() {
    let _serial = serial();
    let counting = Arc::new(Counting::default());
    let store: Arc<dyn Store> = counting.clone();
    let a = array(store.clone(), vec![2048], vec![1024]);
    *counting.slow.lock().unwrap() = Some("a/c/".into());
    pending::set_budget(2 * 4096);
    // 4 KiB in flight on a slow store: a submission of 8 KiB waits for it.
    let first = write(&a, 0, ints(0..1024));
    let (tx, rx) = std::sync::mpsc::channel();
    let submitter = {
        let a = a.clone();
        std::thread::spawn(move || {
            let r = a.write_async(
                vec![0],
                vec![2048],
                ElementType::Int32,
                Layout::Dense(Order::C),
                Box::new(ints(0..2048)),
            );
            tx.send(r.map(drop)).unwrap();
        })
    };
    std::thread::sleep(std::time::Duration::from_millis(30));
    // Now it can never fit: it must be refused, not wait for ever.
    pending::set_budget(4096);
    let outcome = rx
        .recv_timeout(std::time::Duration::from_secs(10))
        .expect("the waiting submission never returned");
    assert!(matches!(outcome, Err(Error::InvalidArg(_))), "{outcome:?}");
    submitter.join().unwrap();
    first.wait().unwrap();
    pending::set_budget(0);
    *counting.slow.lock().unwrap() = None;
    assert_eq!(pending::in_flight(false).0, 0);
    assert_eq!(read_all(&a), ints((0..1024).chain([-1; 1024])));
}

/// A buffer length no buffer can have (more than `isize::MAX` bytes) is
/// `ZARR_ERR_BUFFER_SIZE`, never taken as the length of the caller's memory.
#[test]
fn ffi_buffer_lengths_past_the_address_space_are_refused() {
    use zarr::ffi::zarr_status::*;
    use zarr::ffi::*;
    let _serial = serial();
    let doc = serde_json::to_vec(&json!({
        "zarr_format": 3, "node_type": "array", "shape": [4], "data_type": "int32",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4]}},
        "chunk_key_encoding": {"name": "default"}, "fill_value": 0,
        "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]
    }))
    .unwrap();
    let values = [1i32, 2, 3, 4];
    let (start, count) = ([0u64], [4u64]);
    let (int32, order_c) = (
        zarr_dtype::ZARR_DTYPE_INT32 as i32,
        zarr_order::ZARR_ORDER_C as i32,
    );
    // SAFETY: valid strings, buffers and out-pointers; the handles are freed below.
    unsafe {
        let mut store = std::ptr::null_mut();
        assert_eq!(zarr_store_new_memory(&mut store), ZARR_OK as i32);
        let status = zarr_store_set(
            store,
            c"a/zarr.json".as_ptr(),
            doc.as_ptr().cast(),
            usize::MAX,
        );
        assert_eq!(status, ZARR_ERR_BUFFER_SIZE as i32);
        let status = zarr_store_set(
            store,
            c"a/zarr.json".as_ptr(),
            doc.as_ptr().cast(),
            doc.len(),
        );
        assert_eq!(status, ZARR_OK as i32);
        let mut array = std::ptr::null_mut();
        let mode = zarr_mode::ZARR_MODE_R_PLUS as i32;
        assert_eq!(
            zarr_array_open(store, c"a".as_ptr(), mode, &mut array),
            ZARR_OK as i32
        );
        let buf = values.as_ptr().cast();
        let status = zarr_array_write(
            array,
            1,
            start.as_ptr(),
            count.as_ptr(),
            int32,
            order_c,
            buf,
            usize::MAX,
        );
        assert_eq!(status, ZARR_ERR_BUFFER_SIZE as i32);
        let mut request = std::ptr::null_mut();
        let status = zarr_array_write_async(
            array,
            1,
            start.as_ptr(),
            count.as_ptr(),
            int32,
            order_c,
            buf,
            usize::MAX,
            0,
            &mut request,
        );
        assert_eq!(status, ZARR_ERR_BUFFER_SIZE as i32);
        assert!(request.is_null());
        let mut out = [0i32; 4];
        let status = zarr_array_read(
            array,
            1,
            start.as_ptr(),
            count.as_ptr(),
            int32,
            order_c,
            out.as_mut_ptr().cast(),
            usize::MAX,
        );
        assert_eq!(status, ZARR_ERR_BUFFER_SIZE as i32);
        // Nothing was written; the right length still works.
        assert_eq!(
            zarr_array_read(
                array,
                1,
                start.as_ptr(),
                count.as_ptr(),
                int32,
                order_c,
                out.as_mut_ptr().cast(),
                16
            ),
            ZARR_OK as i32
        );
        assert_eq!(out, [0; 4]);
        assert_eq!(
            zarr_array_write(
                array,
                1,
                start.as_ptr(),
                count.as_ptr(),
                int32,
                order_c,
                buf,
                16
            ),
            ZARR_OK as i32
        );
        assert_eq!(
            zarr_array_read(
                array,
                1,
                start.as_ptr(),
                count.as_ptr(),
                int32,
                order_c,
                out.as_mut_ptr().cast(),
                16
            ),
            ZARR_OK as i32
        );
        assert_eq!(out, values);
        zarr_array_free(array);
        zarr_store_free(store);
    }
}

#[test]
fn converting_writes_convert_when_they_run_and_refuse_values_that_do_not_fit() {
    let _serial = serial();
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let a = array(store, vec![8], vec![4]);
    let doubles =
        |values: &[f64]| -> Vec<u8> { values.iter().flat_map(|v| v.to_ne_bytes()).collect() };
    let submit = |start: u64, values: &[f64]| {
        a.write_async(
            vec![start],
            vec![values.len() as u64],
            ElementType::Float64,
            Layout::Converted(Order::C),
            Box::new(doubles(values)),
        )
        .unwrap()
    };
    // float64 into int32: truncated toward zero, as nc_put_vara_double.
    let fits = submit(0, &[1.9, -2.9, 3.0, 40000.5]);
    // 3e9 does not fit int32: the request fails at wait and stores nothing.
    let too_big = submit(4, &[5.0, 3e9, 7.0, 8.0]);
    let after = submit(6, &[-6.5, 7.25]);
    fits.wait().unwrap();
    assert!(matches!(too_big.wait(), Err(Error::Range(_))));
    after.wait().unwrap();
    assert_eq!(read_all(&a), ints([1, -2, 3, 40000, -1, -1, -6, 7]));
    // The same type goes through unchanged.
    let same = a
        .write_async(
            vec![4],
            vec![2],
            ElementType::Int32,
            Layout::Converted(Order::C),
            Box::new(ints([50, 51])),
        )
        .unwrap();
    same.wait().unwrap();
    assert_eq!(read_all(&a), ints([1, -2, 3, 40000, 50, 51, -6, 7]));
}
