//! Core's frame codec of `keyroute serve` (`keyroute::frame`): the header, the message
//! types and the transport errors, for `keyroute.serve` (its client and loader worker).
//!
//! Not in `__all__` (the package's top level does not show them): `keyroute.serve` is
//! their Python API (`encode_header`, `decode_header`, `TYPES`, `TRANSPORT_ERRORS`, ...).

use pyo3::prelude::*;
use pyo3::pybacked::PyBackedBytes;
use pyo3::types::{PyBytes, PyDict, PyTuple};

use keyroute::frame::{
    Header, MsgType, TransportError, FLAG_DATA_ERROR, HEADER_FIXED_LEN, MAX_HEADER_LEN, REPLY_BIT,
    SYSTEM, VERSION,
};

use crate::args::{int_in, type_name};
use crate::errors::{bad_type, err, guard};

/// `obj` as bytes (a `bytes` or `bytearray`): `BAD_TYPE` otherwise.
fn frame_bytes(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<PyBackedBytes> {
    obj.extract::<PyBackedBytes>()
        .map_err(|_| bad_type(format!("{what} must be bytes, not {}", type_name(obj))))
}

/// The header frame of these fields, as core writes it (big-endian; the request id cut or
/// zero-padded to 16 bytes). `OUT_OF_RANGE` for a field outside its width, `TOO_LARGE`
/// for a session id over 255 bytes. Any version, system or type is written as given (a
/// test may send what the service must refuse).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn encode_frame_header<'py>(
    py: Python<'py>,
    version: &Bound<'py, PyAny>,
    system: &Bound<'py, PyAny>,
    msg_type: &Bound<'py, PyAny>,
    transport_error: &Bound<'py, PyAny>,
    flags: &Bound<'py, PyAny>,
    priority: &Bound<'py, PyAny>,
    deadline_ms: &Bound<'py, PyAny>,
    request_id: &Bound<'py, PyAny>,
    session_id: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyBytes>> {
    guard(|| {
        let rid = frame_bytes(request_id, "request_id")?;
        let sid = frame_bytes(session_id, "session_id")?;
        let mut id = [0u8; 16];
        let n = rid.len().min(16);
        id[..n].copy_from_slice(&rid[..n]);
        let header = Header {
            version: int_in(version, "version", "0..=255")?,
            system: int_in(system, "system", "0..=255")?,
            msg_type: int_in(msg_type, "msg_type", "0..=65535")?,
            transport_error: int_in(transport_error, "transport_error", "0..=65535")?,
            flags: int_in(flags, "flags", "0..=255")?,
            priority: int_in(priority, "priority", "0..=255")?,
            deadline_ms: int_in(deadline_ms, "deadline_ms", "0..=4294967295")?,
            request_id: id,
            session_id: &sid,
        };
        let mut out = vec![0u8; HEADER_FIXED_LEN + sid.len()];
        let written = header.encode_into(&mut out).map_err(err)?;
        Ok(PyBytes::new(py, &out[..written]))
    })
}

/// Every field of a header frame, as core reads it: `(version, system, msg_type,
/// transport_error, flags, priority, deadline_ms, request_id, session_id)`.
/// `OUT_OF_RANGE` for a frame shorter than its 29 bytes plus the session id, or of
/// another version or system; `TOO_LARGE` above 512 bytes.
#[pyfunction]
fn decode_frame_header<'py>(
    py: Python<'py>,
    frame: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyTuple>> {
    guard(|| {
        let bytes = frame_bytes(frame, "the header frame")?;
        let h = Header::decode(&bytes).map_err(err)?;
        (
            h.version,
            h.system,
            h.msg_type,
            h.transport_error,
            h.flags,
            h.priority,
            h.deadline_ms,
            PyBytes::new(py, &h.request_id),
            PyBytes::new(py, h.session_id),
        )
            .into_pyobject(py)
    })
}

/// `{name: number}` of every message type (`keyroute::frame::MsgType::ALL`).
fn msg_types(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let d = PyDict::new(py);
    for t in MsgType::ALL {
        d.set_item(t.name(), t.number())?;
    }
    Ok(d)
}

/// `{number: name}` of every transport error (`keyroute::frame::TransportError::ALL`).
fn transport_errors(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let d = PyDict::new(py);
    for e in TransportError::ALL {
        d.set_item(e.number(), e.name())?;
    }
    Ok(d)
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    // setattr, not add: kept out of __all__ (see the module docs).
    m.setattr(
        "encode_frame_header",
        wrap_pyfunction!(encode_frame_header, m)?,
    )?;
    m.setattr(
        "decode_frame_header",
        wrap_pyfunction!(decode_frame_header, m)?,
    )?;
    m.setattr("FRAME_MSG_TYPES", msg_types(py)?)?;
    m.setattr("FRAME_TRANSPORT_ERRORS", transport_errors(py)?)?;
    m.setattr("FRAME_VERSION", VERSION)?;
    m.setattr("FRAME_SYSTEM", SYSTEM)?;
    m.setattr("FRAME_REPLY_BIT", REPLY_BIT)?;
    m.setattr("FRAME_FLAG_DATA_ERROR", FLAG_DATA_ERROR)?;
    m.setattr("FRAME_HEADER_FIXED_LEN", HEADER_FIXED_LEN)?;
    m.setattr("FRAME_MAX_HEADER_LEN", MAX_HEADER_LEN)?;
    Ok(())
}
