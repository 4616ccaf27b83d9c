//! Non-blocking writes and appends from C: submit, then wait for or test the request.

use super::array::{check_ndim, region_args, with_array_arc};
use super::*;
use crate::node::pending::{self, append_job, write_job, Layout, Payload, Request};
use std::ffi::c_void;

/// `flags` bit of the non-blocking calls: the library copies the buffer when the request is
/// submitted, so the caller may reuse it at once. Without it the library reads the
/// caller's buffer while the request runs: the caller must leave it untouched (and
/// allocated) until the request is done (`zarr_request_wait` or `zarr_request_test`
/// says so, or a flush or free of the array returned).
pub const ZARR_ASYNC_COPY: u32 = 1;

/// A non-blocking request (a write or an append queued on an array handle).
pub struct zarr_request_t {
    inner: Request,
}

/// The caller's buffer, read while the request runs (the caller keeps it untouched).
struct Borrowed {
    ptr: *const u8,
    len: usize,
}

// SAFETY: the caller promises the buffer stays valid and unchanged until the request is
// done (see `ZARR_ASYNC_COPY`); it is only read.
unsafe impl Send for Borrowed {}

impl AsRef<[u8]> for Borrowed {
    fn as_ref(&self) -> &[u8] {
        if self.len == 0 {
            return &[];
        }
        // SAFETY: checked non-NULL at submission; valid until the request is done.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

/// Takes a place in the budget for the request's buffer, then copies it (with
/// `ZARR_ASYNC_COPY`) or borrows it.
unsafe fn payload(
    buf: *const c_void,
    buf_bytes: usize,
    flags: u32,
) -> FfiResult<(pending::Permit, Payload)> {
    if flags & !ZARR_ASYNC_COPY != 0 {
        return Err(Failure::invalid(format!(
            "flags {flags:#x} hold bits other than ZARR_ASYNC_COPY"
        )));
    }
    let bytes = slice(buf as *const u8, buf_bytes, "buf")?;
    let permit = pending::reserve(buf_bytes)?;
    if flags & ZARR_ASYNC_COPY == 0 {
        let borrowed = Borrowed {
            ptr: bytes.as_ptr(),
            len: bytes.len(),
        };
        return Ok((permit, Box::new(borrowed)));
    }
    let mut copy = Vec::new();
    copy.try_reserve_exact(buf_bytes)
        .map_err(|_| crate::error::no_memory(buf_bytes, "the copy of a request's buffer"))?;
    copy.extend_from_slice(bytes);
    Ok((permit, Box::new(copy)))
}

unsafe fn give_request(out_request: *mut *mut zarr_request_t, request: Request) {
    give(out_request, zarr_request_t { inner: request });
}

/// Like `zarr_array_write`, but returns at once with `*out_request`: the write runs on a
/// thread of the array handle behind the handle's earlier non-blocking requests that touch
/// its chunks (shards, when sharded), its chunks encoded on the pool. Writes and appends of
/// one handle apply as in submission order; requests on different chunks run at once (as
/// many as the pool has workers), so a loop of one-chunk writes encodes in parallel. `flags` is 0 or `ZARR_ASYNC_COPY` (see there: without it, `buf` must stay
/// untouched until the request is done). The call first waits while the requests in
/// flight hold more than the budget allows (`zarr_set_async_budget`).
///
/// Errors: at submission, `ZARR_ERR_NULL_ARG`, `ZARR_ERR_RANK_MISMATCH` (`ndim`),
/// `ZARR_ERR_INVALID_ARG` (`flags`, `mem_dtype`, `order`, or a buffer larger than the
/// whole budget), `ZARR_ERR_READ_ONLY`, `ZARR_ERR_NO_MEMORY` (the copy); every other error
/// of `zarr_array_write` is the request's, given by `zarr_request_wait` or
/// `zarr_request_test` with the same guarantee: a failed write stores no chunk torn, and
/// later requests still run.
///
/// Ownership: `*out_request` is a new handle (NULL on failure): free it with
/// `zarr_request_free`. The request holds the array (and its store) until it is done.
///
/// Thread safety: any thread, as `zarr_array_write`. Requests submitted by one thread
/// apply in submission order; blocking calls on the handle do not wait for its requests
/// (wait for them first when they touch the same chunks).
#[no_mangle]
pub unsafe extern "C" fn zarr_array_write_async(
    array: *const zarr_array_t,
    ndim: usize,
    start: *const u64,
    count: *const u64,
    mem_dtype: zarr_dtype_t,
    order: zarr_order_t,
    buf: *const c_void,
    buf_bytes: usize,
    flags: u32,
    out_request: *mut *mut zarr_request_t,
) -> zarr_status_t {
    ffi_guard!({
        clear_out(out_request, "out_request")?;
        with_array_arc(array, |a| {
            let (start, count, elem) = region_args(a, ndim, start, count, mem_dtype)?;
            let (start, count) = (start.to_vec(), count.to_vec());
            let layout = Layout::Dense(super::order(order)?);
            let (permit, buf) = payload(buf, buf_bytes, flags)?;
            let request = a.submit(permit, write_job(a, start, count, elem, layout, buf))?;
            give_request(out_request, request);
            Ok(())
        })
    })
}

/// Like `zarr_array_write_from`, but non-blocking as `zarr_array_write_async`: `buf` holds
/// elements of the numeric type `mem_dtype`, converted to the array's type when the
/// request runs (as netCDF's `nc_put_vara_*`).
///
/// Errors: as `zarr_array_write_async`; the request's also `ZARR_ERR_RANGE` (a value does
/// not fit the array's type: nothing is written) and `ZARR_ERR_DTYPE_MISMATCH` (a type
/// that is not numeric).
///
/// Ownership: as `zarr_array_write_async`.
///
/// Thread safety: as `zarr_array_write_async`.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_write_from_async(
    array: *const zarr_array_t,
    ndim: usize,
    start: *const u64,
    count: *const u64,
    mem_dtype: zarr_dtype_t,
    order: zarr_order_t,
    buf: *const c_void,
    buf_bytes: usize,
    flags: u32,
    out_request: *mut *mut zarr_request_t,
) -> zarr_status_t {
    ffi_guard!({
        clear_out(out_request, "out_request")?;
        with_array_arc(array, |a| {
            let (start, count, elem) = region_args(a, ndim, start, count, mem_dtype)?;
            let (start, count) = (start.to_vec(), count.to_vec());
            let layout = Layout::Converted(super::order(order)?);
            let (permit, buf) = payload(buf, buf_bytes, flags)?;
            let request = a.submit(permit, write_job(a, start, count, elem, layout, buf))?;
            give_request(out_request, request);
            Ok(())
        })
    })
}

/// Like `zarr_array_write_strided`, but non-blocking as `zarr_array_write_async`.
///
/// Errors: as `zarr_array_write_async`; the stride errors come from the request.
///
/// Ownership: as `zarr_array_write_async`; `mem_strides` is copied.
///
/// Thread safety: as `zarr_array_write_async`.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_write_strided_async(
    array: *const zarr_array_t,
    ndim: usize,
    start: *const u64,
    count: *const u64,
    mem_strides: *const i64,
    mem_dtype: zarr_dtype_t,
    buf: *const c_void,
    buf_bytes: usize,
    flags: u32,
    out_request: *mut *mut zarr_request_t,
) -> zarr_status_t {
    ffi_guard!({
        clear_out(out_request, "out_request")?;
        with_array_arc(array, |a| {
            let (start, count, elem) = region_args(a, ndim, start, count, mem_dtype)?;
            let (start, count) = (start.to_vec(), count.to_vec());
            let strides = slice(mem_strides, ndim, "mem_strides")?.to_vec();
            let (permit, buf) = payload(buf, buf_bytes, flags)?;
            let job = write_job(a, start, count, elem, Layout::Strided(strides), buf);
            give_request(out_request, a.submit(permit, job)?);
            Ok(())
        })
    })
}

/// Like `zarr_array_append`, but non-blocking as `zarr_array_write_async`: the appends
/// of one handle grow the array in submission order.
///
/// Errors: as `zarr_array_write_async`; the other errors of `zarr_array_append` come from
/// the request (a failed append appends nothing; later appends still run).
///
/// Ownership: as `zarr_array_write_async`.
///
/// Thread safety: any thread; one handle appends to an array at a time.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_append_async(
    array: *const zarr_array_t,
    axis: usize,
    ndim: usize,
    count: *const u64,
    mem_dtype: zarr_dtype_t,
    order: zarr_order_t,
    buf: *const c_void,
    buf_bytes: usize,
    flags: u32,
    out_request: *mut *mut zarr_request_t,
) -> zarr_status_t {
    ffi_guard!({
        clear_out(out_request, "out_request")?;
        with_array_arc(array, |a| {
            check_ndim(a, ndim)?;
            let count = slice(count, ndim, "count")?.to_vec();
            let elem = element_type(mem_dtype)?;
            let layout = Layout::Dense(super::order(order)?);
            let (permit, buf) = payload(buf, buf_bytes, flags)?;
            let request = a.submit(permit, append_job(axis, count, elem, layout, buf))?;
            give_request(out_request, request);
            Ok(())
        })
    })
}

/// Like `zarr_array_append_from`, but non-blocking as `zarr_array_append_async`: `buf`
/// holds elements of the numeric type `mem_dtype`, converted to the array's type when the
/// request runs.
///
/// Errors: as `zarr_array_append_async`; the request's also `ZARR_ERR_RANGE` (a value does
/// not fit the array's type: nothing is appended) and `ZARR_ERR_DTYPE_MISMATCH` (a type
/// that is not numeric).
///
/// Ownership: as `zarr_array_write_async`.
///
/// Thread safety: as `zarr_array_append_async`.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_append_from_async(
    array: *const zarr_array_t,
    axis: usize,
    ndim: usize,
    count: *const u64,
    mem_dtype: zarr_dtype_t,
    order: zarr_order_t,
    buf: *const c_void,
    buf_bytes: usize,
    flags: u32,
    out_request: *mut *mut zarr_request_t,
) -> zarr_status_t {
    ffi_guard!({
        clear_out(out_request, "out_request")?;
        with_array_arc(array, |a| {
            check_ndim(a, ndim)?;
            let count = slice(count, ndim, "count")?.to_vec();
            let elem = element_type(mem_dtype)?;
            let layout = Layout::Converted(super::order(order)?);
            let (permit, buf) = payload(buf, buf_bytes, flags)?;
            let request = a.submit(permit, append_job(axis, count, elem, layout, buf))?;
            give_request(out_request, request);
            Ok(())
        })
    })
}

/// Like `zarr_array_append_strided`, but non-blocking as `zarr_array_append_async`.
///
/// Errors: as `zarr_array_append_async`; the stride errors come from the request.
///
/// Ownership: as `zarr_array_write_async`; `mem_strides` is copied.
///
/// Thread safety: as `zarr_array_append_async`.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_append_strided_async(
    array: *const zarr_array_t,
    axis: usize,
    ndim: usize,
    count: *const u64,
    mem_strides: *const i64,
    mem_dtype: zarr_dtype_t,
    buf: *const c_void,
    buf_bytes: usize,
    flags: u32,
    out_request: *mut *mut zarr_request_t,
) -> zarr_status_t {
    ffi_guard!({
        clear_out(out_request, "out_request")?;
        with_array_arc(array, |a| {
            check_ndim(a, ndim)?;
            let count = slice(count, ndim, "count")?.to_vec();
            let strides = slice(mem_strides, ndim, "mem_strides")?.to_vec();
            let elem = element_type(mem_dtype)?;
            let (permit, buf) = payload(buf, buf_bytes, flags)?;
            let job = append_job(axis, count, elem, Layout::Strided(strides), buf);
            give_request(out_request, a.submit(permit, job)?);
            Ok(())
        })
    })
}

/// Waits until the request is done and returns its status; a failure's message is the
/// calling thread's last error (`zarr_last_error`). Waiting again returns the same.
///
/// Errors: those of the write or append (see `zarr_array_write_async`).
///
/// Ownership: the request stays the caller's.
///
/// Thread safety: any thread; several may wait for one request.
#[no_mangle]
pub unsafe extern "C" fn zarr_request_wait(request: *const zarr_request_t) -> zarr_status_t {
    ffi_guard!({
        let request = request.as_ref().ok_or_else(|| Failure::null("request"))?;
        Ok(request.inner.wait()?)
    })
}

/// Sets `*out_done` to whether the request is done, without waiting. When it is done, the
/// status is the request's (as `zarr_request_wait` returns it); otherwise `ZARR_OK`.
///
/// Errors: those of the request once done.
///
/// Ownership: the request stays the caller's.
///
/// Thread safety: any thread.
#[no_mangle]
pub unsafe extern "C" fn zarr_request_test(
    request: *const zarr_request_t,
    out_done: *mut bool,
) -> zarr_status_t {
    ffi_guard!({
        let request = request.as_ref().ok_or_else(|| Failure::null("request"))?;
        if out_done.is_null() {
            return Err(Failure::null("out_done"));
        }
        let outcome = request.inner.test();
        *out_done = outcome.is_some();
        Ok(outcome.unwrap_or(Ok(()))?)
    })
}

/// Waits for the `n` requests of `requests` (NULL entries are skipped) and returns the
/// status of the first that failed, in the order given (its message is the last error);
/// `ZARR_OK` when all succeeded. It always waits for all of them.
///
/// Errors: those of the requests.
///
/// Ownership: the requests stay the caller's.
///
/// Thread safety: any thread.
#[no_mangle]
pub unsafe extern "C" fn zarr_request_wait_all(
    requests: *const *mut zarr_request_t,
    n: usize,
) -> zarr_status_t {
    ffi_guard!({
        let requests = slice(requests, n, "requests")?;
        let mut first = Ok(());
        for request in requests.iter().filter_map(|r| r.as_ref()) {
            let result = request.inner.wait();
            if first.is_ok() {
                first = result;
            }
        }
        Ok(first?)
    })
}

/// Releases a request handle (NULL is ignored). A request not yet done still runs to its
/// end (its array's flush or free waits for it), but its error is lost.
///
/// Errors: none: it returns a value, never a status.
///
/// Ownership: takes the handle.
///
/// Thread safety: any thread, once no other call is using the handle.
#[no_mangle]
pub unsafe extern "C" fn zarr_request_free(request: *mut zarr_request_t) {
    ffi_guard!(() => {
        if !request.is_null() {
            drop(Box::from_raw(request));
        }
    })
}

/// Sets the process-wide budget of bytes held by non-blocking requests in flight (their
/// buffers, copied or borrowed; 0, the default: no limit). A submission that would pass it
/// waits until enough requests are done; one larger than the whole budget is refused, also
/// when it was waiting as the budget dropped below it (`ZARR_ERR_INVALID_ARG`).
///
/// Errors: none beyond the usual ones (Conventions).
///
/// Ownership: nothing changes hands.
///
/// Thread safety: any thread; submissions waiting see the new budget at once.
#[no_mangle]
pub extern "C" fn zarr_set_async_budget(bytes: usize) -> zarr_status_t {
    ffi_guard!({
        pending::set_budget(bytes);
        Ok(())
    })
}

/// Sets `*out_bytes` to the bytes non-blocking requests hold now and `*out_peak` to the
/// most they held at once since the last reset (either may be NULL); with `reset_peak`,
/// then starts the peak again from the bytes held now.
///
/// Errors: only the usual ones (Conventions).
///
/// Ownership: nothing is kept; the results go to the caller's outputs.
///
/// Thread safety: any thread.
#[no_mangle]
pub unsafe extern "C" fn zarr_async_in_flight(
    reset_peak: bool,
    out_bytes: *mut usize,
    out_peak: *mut usize,
) -> zarr_status_t {
    ffi_guard!({
        let (bytes, peak) = pending::in_flight(reset_peak);
        if let Some(out) = out_bytes.as_mut() {
            *out = bytes;
        }
        if let Some(out) = out_peak.as_mut() {
            *out = peak;
        }
        Ok(())
    })
}
