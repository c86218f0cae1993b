#!/usr/bin/env python3
"""Write the hand-made GPU profile samples in samples/gpu/ (deterministic; run again to refresh).

Every sample is made up here (no tool output is copied): the SQLite ones with the standard
``sqlite3`` module, following the table layouts of Nsight Systems exports (2022 and 2024
style) and nvprof databases; the text ones in the layouts nvprof, ``nsys stats``, Nsight
Compute and PyProf print.  The numbers are chosen so that tests can check exact totals:

- one "PyTorch" step on one thread: ``aten::linear`` (-> ``aten::addmm`` -> gemm kernel),
  ``aten::relu`` (-> elementwise kernel), then backward ``AddmmBackward0`` (stashed seq)
  launching two gemm kernels; one kernel launched outside any range; NVTX ranges nested.
"""
from __future__ import annotations

import os
import sqlite3
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "samples" / "gpu"

PID, TID = 4242, 4243
GTID = (PID << 24) | TID          # nsys globalTid (hardware id 0)
GPID = PID << 24                  # nsys globalPid
GEMM = "void gemm_kernel<float, 128>(float const*, float const*, float*, int, int, int)"
GEMM_SHORT, GEMM_MANGLED = "gemm_kernel", "_Z11gemm_kernelIfLi128EEvPKfS1_Pfiii"
RELU = "void at::native::elementwise_kernel<128, 4>(int, at::native::relu_functor)"
RELU_SHORT, RELU_MANGLED = "elementwise_kernel", "_ZN2at6native18elementwise_kernelILi128ELi4EEEviNS0_12relu_functorE"

# (range text, start, end) on the main thread; nested as printed
RANGES = [
    ("train_step", 1_000, 100_000),
    ("aten::linear, seq = 7, sizes = [[64, 256], [512, 256], [512]]", 2_000, 20_000),
    ("aten::addmm, seq = 7, sizes = [[512], [64, 256], [256, 512]]", 3_000, 19_000),
    ("aten::relu, seq = 8, sizes = [[64, 512]]", 21_000, 30_000),
    ("AddmmBackward0, stashed seq=7", 40_000, 60_000),
]
# (correlation id, launch start, launch end, kernel name, kernel start, kernel end, grid, block)
LAUNCHES = [
    (101, 4_000, 5_000, "gemm", 10_000, 40_000, (8, 4, 1), (128, 1, 1)),
    (102, 22_000, 23_000, "relu", 41_000, 45_000, (64, 1, 1), (128, 1, 1)),
    (103, 41_000, 42_000, "gemm", 50_000, 90_000, (8, 4, 1), (128, 1, 1)),
    (104, 43_000, 44_000, "gemm", 91_000, 121_000, (16, 2, 1), (128, 1, 1)),
    (105, 150_000, 151_000, "relu", 152_000, 160_000, (64, 1, 1), (128, 1, 1)),  # outside any range
]
COPIES = [(201, 500, 900, 1_000, 2_000, 1, 262144), (202, 130_000, 131_000, 132_000, 140_000, 2, 131072)]


def _db(name: str) -> sqlite3.Connection:
    p = OUT / name
    if p.exists():
        p.unlink()
    return sqlite3.connect(p)


# --------------------------------------------------------------------------- Nsight Systems
def nsys(name: str, style: int) -> None:
    """style 2022: EXPORT_META_DATA, no ENUM tables, runtime ``name`` column, inline NVTX text;
    style 2024: META_DATA_EXPORT, ENUM tables, greenContextId, NVTX text by textId."""
    con = _db(name)
    strings: dict[str, int] = {}

    def sid(s: str) -> int:
        if s not in strings:
            strings[s] = len(strings) + 1
        return strings[s]

    con.execute("CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL)")
    meta = "EXPORT_META_DATA" if style == 2022 else "META_DATA_EXPORT"
    con.execute(f"CREATE TABLE {meta} (name TEXT NOT NULL, value TEXT)")
    version, schema = ("2022.2.1.31", "2.9.1") if style == 2022 else ("2024.5.1.113", "3.13.2")
    con.executemany(f"INSERT INTO {meta} VALUES (?, ?)", [
        ("EXPORT_PRODUCT_NAME", "NVIDIA Nsight Systems"), ("EXPORT_PRODUCT_VERSION", version),
        ("EXPORT_SCHEMA_VERSION", schema)])
    con.execute("CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INTEGER, utcTime TEXT, localTime TEXT)")
    con.execute("INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (1700000000000000000, '2023-11-14T22:13:20', "
                "'2023-11-14T14:13:20')")
    con.execute("CREATE TABLE TARGET_INFO_GPU (vmId INTEGER, id INTEGER, name TEXT, busLocation TEXT, smCount INTEGER,"
                " totalMemory INTEGER, computeMajor INTEGER, computeMinor INTEGER)")
    con.execute("INSERT INTO TARGET_INFO_GPU VALUES (0, 0, 'Sample GPU', '0000:01:00.0', 80, 17179869184, 8, 0)")
    green = ", greenContextId INTEGER" if style == 2024 else ""
    con.execute(f"""CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL,
        deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL{green}, streamId INTEGER NOT NULL,
        correlationId INTEGER, globalPid INTEGER, demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL,
        mangledName INTEGER, launchType INTEGER, cacheConfig INTEGER, registersPerThread INTEGER NOT NULL,
        gridX INTEGER NOT NULL, gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL, blockX INTEGER NOT NULL,
        blockY INTEGER NOT NULL, blockZ INTEGER NOT NULL, staticSharedMemory INTEGER NOT NULL,
        dynamicSharedMemory INTEGER NOT NULL)""")
    names = {"gemm": (GEMM, GEMM_SHORT, GEMM_MANGLED), "relu": (RELU, RELU_SHORT, RELU_MANGLED)}
    for corr, ls, le, k, ks, ke, grid, block in LAUNCHES:
        d, s, m = names[k]
        vals = [ks, ke, 0, 1] + ([None] if style == 2024 else []) + [
            7, corr, GPID, sid(d), sid(s), sid(m), 1, 0, 32, *grid, *block, 1024, 0]
        con.execute(f"INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES ({', '.join('?' * len(vals))})", vals)
    mname = "" if style == 2024 else ", name TEXT"
    con.execute(f"""CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL,
        deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL{green}, streamId INTEGER NOT NULL, correlationId INTEGER,
        globalPid INTEGER, bytes INTEGER NOT NULL, copyKind INTEGER NOT NULL, srcKind INTEGER, dstKind INTEGER{mname})""")
    for corr, ls, le, ks, ke, kind, nbytes in COPIES:
        vals = [ks, ke, 0, 1] + ([None] if style == 2024 else []) + [7, corr, GPID, nbytes, kind,
                                                                     1 if kind == 1 else 3, 3 if kind == 1 else 1]
        vals += [] if style == 2024 else [None]
        con.execute(f"INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES ({', '.join('?' * len(vals))})", vals)
    con.execute("""CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER NOT NULL, end INTEGER NOT NULL,
        deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER,
        globalPid INTEGER, value INTEGER NOT NULL, bytes INTEGER NOT NULL, graphNodeId INTEGER, memKind INTEGER)""")
    if style == 2024:
        con.execute("INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES (165000, 166000, 0, 1, 7, 301, ?, 0, 4096, NULL, 3)",
                    [GPID])
    rname = ", name TEXT" if style == 2022 else ""
    con.execute(f"""CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL,
        eventClass INTEGER NOT NULL, globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL,
        returnValue INTEGER NOT NULL, callchainId INTEGER{rname})""")
    rows = [(ls, le, 0, GTID, corr, sid("cudaLaunchKernel_v7000"), 0, None) for corr, ls, le, *_ in LAUNCHES]
    rows += [(ls, le, 0, GTID, corr, sid("cudaMemcpyAsync_v3020"), 0, None) for corr, ls, le, *_ in COPIES]
    if style == 2024:
        rows.append((164000, 164500, 0, GTID, 301, sid("cudaMemsetAsync_v3020"), 0, None))
    rows.append((100, 200, 1, GTID, 1, sid("cuInit"), 0, None))
    if style == 2022:  # the CUDA backtrace rows repeat launches: they must not count as calls
        rows += [(ls - 10, le + 10, 67, GTID, corr, sid("cudaLaunchKernel"), 0, 1) for corr, ls, le, *_ in LAUNCHES]
    for r in rows:
        vals = list(r) + ([None] if style == 2022 else [])
        con.execute(f"INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES ({', '.join('?' * len(vals))})", vals)
    con.execute("""CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL,
        rangeId INTEGER, category INTEGER, color INTEGER, text TEXT, globalTid INTEGER, endGlobalTid INTEGER,
        textId INTEGER, domainId INTEGER, uint64Value INTEGER, int64Value INTEGER, doubleValue REAL,
        uint32Value INTEGER, int32Value INTEGER, floatValue REAL, jsonTextId INTEGER, jsonText TEXT)""")

    def nvtx(start, end, etype, text, domain=0, gtid=GTID):
        by_id = style == 2024 or (style == 2022 and text and text.startswith("aten::addmm"))
        con.execute("INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, textId, domainId) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?)",
                    [start, end, etype, None if by_id else text, gtid, sid(text) if by_id and text else None, domain])

    nvtx(50, None, 75, "PyTorch", domain=1)
    nvtx(60, None, 39, "main thread")
    for text, s, e in RANGES:
        nvtx(s, e, 59, text, domain=1 if text == "train_step" else 0)
    nvtx(125_000, 170_000, 60, "data loading")
    nvtx(131_500, None, 34, "checkpoint")
    con.execute("CREATE TABLE ThreadNames (nameId INTEGER NOT NULL, priority INTEGER, globalTid INTEGER)")
    con.execute("INSERT INTO ThreadNames VALUES (?, 10, ?)", [sid("python3"), GTID])
    if style == 2024:
        con.execute("CREATE TABLE ENUM_NSYS_EVENT_TYPE (id INTEGER PRIMARY KEY, name TEXT, label TEXT)")
        con.executemany("INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES (?, ?, ?)", [
            (34, "NvtxMark", "NVTX mark"), (39, "NvtxThread", "NVTX thread name"),
            (59, "NvtxPushPopRange", "NVTX push/pop range"), (60, "NvtxStartEndRange", "NVTX start/end range"),
            (75, "NvtxDomainCreate", "NVTX domain create")])
        con.execute("CREATE TABLE ENUM_CUDA_MEMCPY_OPER (id INTEGER PRIMARY KEY, name TEXT, label TEXT)")
        con.executemany("INSERT INTO ENUM_CUDA_MEMCPY_OPER VALUES (?, ?, ?)", [
            (1, "CUDA_MEMCPY_KIND_HTOD", "Host-to-Device"), (2, "CUDA_MEMCPY_KIND_DTOH", "Device-to-Host")])
    con.executemany("INSERT INTO StringIds VALUES (?, ?)", [(i, s) for s, i in strings.items()])
    con.commit()
    con.close()


# --------------------------------------------------------------------------- nvprof database
def nvvp(name: str) -> None:
    con = _db(name)
    con.execute("CREATE TABLE StringTable(_id_ INTEGER PRIMARY KEY AUTOINCREMENT, value TEXT NOT NULL UNIQUE)")
    con.execute("CREATE TABLE Version(version INTEGER)")
    con.execute("INSERT INTO Version VALUES (11)")
    strings = ["-- null --", "python3 train.py", "Sample GPU", GEMM_MANGLED, RELU_MANGLED, "train_step",
               "aten::linear, seq = 7, sizes = [[64, 256], [512, 256], [512]]"]
    for i, s in enumerate(strings):
        con.execute("INSERT INTO StringTable VALUES (?, ?)", [i, s])
    sid = {s: i for i, s in enumerate(strings)}
    base = 1_600_000_000_000_000_000  # nvprof times are epoch ns
    kcols = ("cacheConfig BLOB NOT NULL, sharedMemoryConfig INT NOT NULL, registersPerThread INT NOT NULL, "
             "start INT NOT NULL, end INT NOT NULL, deviceId INT NOT NULL, contextId INT NOT NULL, streamId INT NOT NULL, "
             "gridX INT NOT NULL, gridY INT NOT NULL, gridZ INT NOT NULL, blockX INT NOT NULL, blockY INT NOT NULL, "
             "blockZ INT NOT NULL, staticSharedMemory INT NOT NULL, dynamicSharedMemory INT NOT NULL, "
             "correlationId INT NOT NULL, name INT NOT NULL")
    for t in ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL"):
        con.execute(f"CREATE TABLE {t}(_id_ INTEGER PRIMARY KEY AUTOINCREMENT, {kcols})")
    for i, (corr, ls, le, k, ks, ke, grid, block) in enumerate(LAUNCHES[:4]):
        t = "CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL" if i < 3 else "CUPTI_ACTIVITY_KIND_KERNEL"
        con.execute(f"INSERT INTO {t} (cacheConfig, sharedMemoryConfig, registersPerThread, start, end, deviceId, "
                    "contextId, streamId, gridX, gridY, gridZ, blockX, blockY, blockZ, staticSharedMemory, "
                    "dynamicSharedMemory, correlationId, name) VALUES (x'10', 1, 32, ?, ?, 0, 1, 7, ?, ?, ?, ?, ?, ?, "
                    "1024, 0, ?, ?)", [base + ks, base + ke, *grid, *block, corr,
                                        sid[GEMM_MANGLED if k == "gemm" else RELU_MANGLED]])
    api = ("_id_ INTEGER PRIMARY KEY AUTOINCREMENT, cbid INT NOT NULL, start INT NOT NULL, end INT NOT NULL, "
           "processId INT NOT NULL, threadId INT NOT NULL, correlationId INT NOT NULL, returnValue INT NOT NULL")
    con.execute(f"CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME({api})")
    con.execute(f"CREATE TABLE CUPTI_ACTIVITY_KIND_DRIVER({api})")
    tid = -570288384  # nvprof stores thread ids as signed 32-bit integers
    for corr, ls, le, *_ in LAUNCHES[:4]:
        con.execute("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (cbid, start, end, processId, threadId, correlationId, "
                    "returnValue) VALUES (211, ?, ?, ?, ?, ?, 0)", [base + ls, base + le, PID, tid, corr])
    con.execute("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (cbid, start, end, processId, threadId, correlationId, "
                "returnValue) VALUES (41, ?, ?, ?, ?, 201, 0)", [base + 500, base + 900, PID, tid])
    con.execute("INSERT INTO CUPTI_ACTIVITY_KIND_DRIVER (cbid, start, end, processId, threadId, correlationId, "
                "returnValue) VALUES (1, ?, ?, ?, ?, 1, 0)", [base + 100, base + 200, PID, tid])
    con.execute("CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY(_id_ INTEGER PRIMARY KEY AUTOINCREMENT, copyKind INT NOT NULL, "
                "srcKind INT NOT NULL, dstKind INT NOT NULL, flags INT NOT NULL, bytes INT NOT NULL, start INT NOT NULL, "
                "end INT NOT NULL, deviceId INT NOT NULL, contextId INT NOT NULL, streamId INT NOT NULL, "
                "correlationId INT NOT NULL, runtimeCorrelationId INT NOT NULL)")
    con.execute("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (copyKind, srcKind, dstKind, flags, bytes, start, end, deviceId, "
                "contextId, streamId, correlationId, runtimeCorrelationId) VALUES (1, 1, 3, 0, 262144, ?, ?, 0, 1, 7, 201, 0)",
                [base + 1000, base + 2000])
    con.execute("CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET(_id_ INTEGER PRIMARY KEY AUTOINCREMENT, value INT NOT NULL, "
                "bytes INT NOT NULL, start INT NOT NULL, end INT NOT NULL, deviceId INT NOT NULL, contextId INT NOT NULL, "
                "streamId INT NOT NULL, correlationId INT NOT NULL, flags INT NOT NULL, memoryKind INT NOT NULL)")
    con.execute("CREATE TABLE CUPTI_ACTIVITY_KIND_MARKER(_id_ INTEGER PRIMARY KEY AUTOINCREMENT, flags INT NOT NULL, "
                "timestamp INT NOT NULL, id INT NOT NULL, objectKind INT NOT NULL, objectId BLOB NOT NULL, "
                "name INT NOT NULL, domain INT NOT NULL)")
    obj = PID.to_bytes(4, "little") + (tid & 0xFFFFFFFF).to_bytes(4, "little") + bytes(4)
    for mid, (text, s, e) in enumerate(RANGES[:2], start=1):
        con.execute("INSERT INTO CUPTI_ACTIVITY_KIND_MARKER (flags, timestamp, id, objectKind, objectId, name, domain) "
                    "VALUES (2, ?, ?, 2, ?, ?, 0)", [base + s, mid, obj, sid[text]])
        con.execute("INSERT INTO CUPTI_ACTIVITY_KIND_MARKER (flags, timestamp, id, objectKind, objectId, name, domain) "
                    "VALUES (4, ?, ?, 2, ?, 0, 0)", [base + e, mid, obj])
    con.execute("CREATE TABLE CUPTI_ACTIVITY_KIND_DEVICE(_id_ INTEGER PRIMARY KEY AUTOINCREMENT, id INT NOT NULL, "
                "name INT NOT NULL, numMultiprocessors INT NOT NULL, globalMemorySize INT NOT NULL, "
                "computeCapabilityMajor INT NOT NULL, computeCapabilityMinor INT NOT NULL)")
    con.execute("INSERT INTO CUPTI_ACTIVITY_KIND_DEVICE (id, name, numMultiprocessors, globalMemorySize, "
                "computeCapabilityMajor, computeCapabilityMinor) VALUES (0, 2, 80, 17179869184, 7, 0)")
    con.commit()
    con.close()


# --------------------------------------------------------------------------- text formats
TEXT_SAMPLES = {
    # CUDA 10 style GPU trace CSV: Correlation_ID column, SrcMemType/DstMemType, times in us
    "nvprof_gpu_trace_cuda10.csv": '''==7001== NVPROF is profiling process 7001, command: ./app
==7001== Profiling application: ./app
==7001== Profiling result:
"Start","Duration","Grid X","Grid Y","Grid Z","Block X","Block Y","Block Z","Registers Per Thread","Static SMem","Dynamic SMem","Size","Throughput","SrcMemType","DstMemType","Device","Context","Stream","Name","Correlation_ID"
us,us,,,,,,,,KB,B,MB,GB/s,,,,,,,
1.000000,1.000000,,,,,,,,,,0.250000,262.144000,"Pageable","Device","Sample GPU (0)","1","7","[CUDA memcpy HtoD]",201
10.000000,30.000000,8,4,1,128,1,1,32,1.000000,0,,,,,"Sample GPU (0)","1","7","void gemm_kernel<float, 128>(float const*, float const*, float*, int, int, int)",101
41.000000,4.000000,64,1,1,128,1,1,32,0.000000,0,,,,,"Sample GPU (0)","1","7","void at::native::elementwise_kernel<128, 4>(int, at::native::relu_functor)",102
50.000000,40.000000,8,4,1,128,1,1,32,1.000000,0,,,,,"Sample GPU (0)","1","7","void gemm_kernel<float, 128>(float const*, float const*, float*, int, int, int)",103
91.000000,30.000000,16,2,1,128,1,1,32,1.000000,0,,,,,"Sample GPU (0)","1","7","void gemm_kernel<float, 128>(float const*, float const*, float*, int, int, int)",104
''',
    # text GPU trace: values carry their unit, old correlation-id suffix on names
    "nvprof_gpu_trace.txt": '''==7002== NVPROF is profiling process 7002, command: ./app
==7002== Profiling application: ./app
==7002== Profiling result:
   Start  Duration            Grid Size      Block Size     Regs*    SSMem*    DSMem*      Size  Throughput           Device   Context    Stream  Name
1.0000us  1.0000us                    -               -         -         -         -  256.00KB  244.14GB/s  Sample GPU (0)         1         7  [CUDA memcpy HtoD]
10.000us  30.000us              (8 4 1)       (128 1 1)        32  1.0000KB        0B         -           -  Sample GPU (0)         1         7  gemm_kernel(float const *, float*, int) [101]
41.000us  4.0000us             (64 1 1)       (128 1 1)        32        0B        0B         -           -  Sample GPU (0)         1         7  relu_kernel(int, float*) [102]
50.000us  40.000us              (8 4 1)       (128 1 1)        32  1.0000KB        0B         -           -  Sample GPU (0)         1         7  gemm_kernel(float const *, float*, int) [103]

Regs: Number of registers used per CUDA thread.
''',
    "nvprof_api_trace.csv": '''==7003== NVPROF is profiling process 7003, command: ./app
==7003== Profiling application: ./app
==7003== Profiling result:
"Start","Duration","Name","Correlation_ID"
us,us,,
0.100000,0.100000,"cuInit",1
0.500000,0.400000,"cudaMemcpyAsync",201
4.000000,1.000000,"cudaLaunchKernel",101
22.000000,1.000000,"cudaLaunchKernel",102
''',
    # summary, text, CUDA >= 9 (Type column; section label on its first row only)
    "nvprof_summary.txt": '''==7004== NVPROF is profiling process 7004, command: ./app
==7004== Profiling application: ./app
==7004== Profiling result:
            Type  Time(%)      Time     Calls       Avg       Min       Max  Name
 GPU activities:   80.00%  100.00us         3  33.333us  30.000us  40.000us  void gemm_kernel<float, 128>(float const*, float const*, float*, int, int, int)
                   15.00%  18.750us         2  9.3750us  4.0000us  14.750us  relu_kernel(int, float*)
                    5.00%  6.2500us         1  6.2500us  6.2500us  6.2500us  [CUDA memcpy HtoD]
      API calls:   99.00%  1.50000s         4  375.00ms  1.0000us  1.49999s  cudaLaunchKernel
                    1.00%  15.000ms         1  15.000ms  15.000ms  15.000ms  cudaMalloc
''',
    # summary, text, CUDA <= 8 (no Type column; API calls in their own block)
    "nvprof_summary_cuda8.txt": '''==7005== NVPROF is profiling process 7005, command: ./app
==7005== Profiling application: ./app
==7005== Profiling result:
Time(%)      Time     Calls       Avg       Min       Max  Name
 84.21%  100.00us         3  33.333us  30.000us  40.000us  gemm_kernel(float const *, float*, int)
 15.79%  18.750us         2  9.3750us  4.0000us  14.750us  relu_kernel(int, float*)

==7005== API calls:
Time(%)      Time     Calls       Avg       Min       Max  Name
100.00%  1.50000s         4  375.00ms  1.0000us  1.49999s  cudaLaunchKernel
''',
    "nvprof_metrics.txt": '''==7006== NVPROF is profiling process 7006, command: ./app
==7006== Profiling application: ./app
==7006== Profiling result:
==7006== Metric result:
Invocations                               Metric Name                        Metric Description         Min         Max         Avg
Device "Sample GPU (0)"
    Kernel: gemm_kernel(float const *, float*, int)
          3                             inst_per_warp                     Instructions per warp  120.500000  130.250000  125.000000
          3                         branch_efficiency                         Branch Efficiency     100.00%     100.00%     100.00%
          3                      dram_read_throughput             Device Memory Read Throughput  1.2000GB/s  1.5000GB/s  1.3500GB/s
          3                            sm_efficiency                   Multiprocessor Activity     Low (2)     Mid (5)     Mid (4)
''',
    "nsys_stats_cuda_gpu_kern_sum.csv": '''Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name
86.2,100000,3,33333.3,30000.0,30000,40000,5773.5,"void gemm_kernel<float, 128>(float const*, float const*, float*, int, int, int)"
13.8,16000,2,8000.0,8000.0,4000,12000,5656.9,"void at::native::elementwise_kernel<128, 4>(int, at::native::relu_functor)"
''',
    # several reports after nsys profile --stats=true, column text, old and new report names
    "nsys_stats_reports.txt": '''Generating '/tmp/nsys-report-1a2b.qdstrm'
[1/4] [========================100%] report1.nsys-rep
[2/4] [========================100%] report1.sqlite
[3/4] Executing 'cuda_gpu_kern_sum' stats report

 ** CUDA GPU Kernel Summary (cuda_gpu_kern_sum):

 Time (%)  Total Time (ns)  Instances  Avg (ns)  Med (ns)  Min (ns)  Max (ns)  StdDev (ns)                                      Name
 --------  ---------------  ---------  --------  --------  --------  --------  -----------  ---------------------------------------------------------------------------------
     86.2          100,000          3  33,333.3  30,000.0    30,000    40,000      5,773.5  void gemm_kernel<float, 128>(float const*, float const*, float*, int, int, int)
     13.8           16,000          2   8,000.0   8,000.0     4,000    12,000      5,656.9  void at::native::elementwise_kernel<128, 4>(int, at::native::relu_functor)

[4/4] Executing 'cuda_api_sum' stats report

 ** CUDA API Summary (cuda_api_sum):

 Time (%)  Total Time (ns)  Num Calls  Avg (ns)  Med (ns)  Min (ns)  Max (ns)  StdDev (ns)          Name
 --------  ---------------  ---------  --------  --------  --------  --------  -----------  ------------------
     90.0            4,000          4   1,000.0   1,000.0     1,000     1,000          0.0  cudaLaunchKernel
     10.0              400          1     400.0     400.0       400       400          0.0  cudaMemcpyAsync

Running [/opt/nvidia/nsight-systems/2022.4.2/host-linux-x64/reports/gpumemtimesum.py report1.sqlite]...

 Time(%)  Total Time (ns)  Count  Average  Minimum  Maximum  StdDev      Operation
 -------  ---------------  -----  -------  -------  -------  ------  ------------------
    100.0            1,000      1  1,000.0    1,000    1,000     0.0  [CUDA memcpy HtoD]

Running [/opt/nvidia/nsight-systems/2022.4.2/host-linux-x64/reports/nvtxppsum.py report1.sqlite]...

 Time(%)  Total Time (ns)  Instances   Average   Minimum  Maximum  StdDev     Style        Range
 -------  ---------------  ---------  --------  -------  -------  ------  --------  ----------
     99.0           99,000          1  99,000.0   99,000   99,000     0.0  PushPop   train_step
      1.0            1,000          1   1,000.0    1,000    1,000     0.0  PushPop   aten::relu

Running [/opt/nvidia/nsight-systems/2022.4.2/host-linux-x64/reports/osrtsum.py report1.sqlite]...

 Time(%)  Total Time (ns)  Num Calls  Average  Minimum  Maximum  StdDev    Name
 -------  ---------------  ---------  -------  -------  -------  ------  --------
    100.0            5,000          1  5,000.0    5,000    5,000     0.0  poll
''',
    "nsys_stats_cuda_gpu_trace.csv": '''Start (ns),Duration (ns),CorrId,GrdX,GrdY,GrdZ,BlkX,BlkY,BlkZ,Reg/Trd,StcSMem (MB),DymSMem (MB),Bytes (MB),Throughput (MBps),SrcMemKd,DstMemKd,Device,Ctx,Strm,Name
1000,1000,201,,,,,,,,,,0.262,262144.000,Pageable,Device,Sample GPU (0),1,7,[CUDA memcpy Host-to-Device]
10000,30000,101,8,4,1,128,1,1,32,0.001,0.000,,,,,Sample GPU (0),1,7,"void gemm_kernel<float, 128>(float const*, float const*, float*, int, int, int)"
41000,4000,102,64,1,1,128,1,1,32,0.000,0.000,,,,,Sample GPU (0),1,7,"void at::native::elementwise_kernel<128, 4>(int, at::native::relu_functor)"
''',
    "ncu_details.csv": '''==PROF== Connected to process 7010 (/usr/bin/python3.10)
==PROF== Profiling "gemm_kernel": 0%....50%....100% - 9 passes
==PROF== Profiling "elementwise_kernel": 0%....50%....100% - 9 passes
==PROF== Disconnected from process 7010
"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"
"0","7010","python3.10","127.0.0.1","gemm_kernel","1","7","(128, 1, 1)","(8, 4, 1)","0","8.0","GPU Speed Of Light Throughput","DRAM Frequency","cycle/nsecond","1.51"
"0","7010","python3.10","127.0.0.1","gemm_kernel","1","7","(128, 1, 1)","(8, 4, 1)","0","8.0","GPU Speed Of Light Throughput","Elapsed Cycles","cycle","42,150"
"0","7010","python3.10","127.0.0.1","gemm_kernel","1","7","(128, 1, 1)","(8, 4, 1)","0","8.0","GPU Speed Of Light Throughput","Duration","usecond","30.02"
"1","7010","python3.10","127.0.0.1","elementwise_kernel","1","7","(128, 1, 1)","(64, 1, 1)","0","8.0","GPU Speed Of Light Throughput","Elapsed Cycles","cycle","5,620"
"1","7010","python3.10","127.0.0.1","elementwise_kernel","1","7","(128, 1, 1)","(64, 1, 1)","0","8.0","GPU Speed Of Light Throughput","Duration","nsecond","4,032"
''',
    "ncu_raw.csv": '''"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","gpu__time_duration.sum","sm__throughput.avg.pct_of_peak_sustained_elapsed","dram__bytes.sum"
"","","","","","","","","","","","nsecond","%","byte"
"0","7011","python3","host","gemm_kernel","1","7","(128, 1, 1)","(8, 4, 1)","0","8.0","30,016","71.25","1,048,576"
"1","7011","python3","host","elementwise_kernel","1","7","(128, 1, 1)","(64, 1, 1)","0","8.0","4,032","12.50","262,144"
''',
    "pyprof_net.dict": "".join(
        repr(r) + "\n" for r in [
            {"kShortName": GEMM_SHORT, "kDuration": 30000, "layer": ["fc1"], "trace": ["net.py:20"], "reprMarkers": [],
             "marker": ["{'mod': 'torch.nn.functional', 'op': 'linear', 'args': [{'name': '', 'type': 'tensor', "
                        "'shape': (64, 256), 'dtype': 'float32'}, {'name': '', 'type': 'tensor', 'shape': (512, 256), "
                        "'dtype': 'float32'}, {'name': '', 'type': 'tensor', 'shape': (512,), 'dtype': 'float32'}]}"],
             "seqMarker": ["aten::linear, seq = 7"], "seqId": [7], "subSeqId": 0, "altSeqId": [], "dir": "fprop",
             "mod": ["torch.nn.functional"], "op": ["linear"], "tid": 4243, "device": 0, "stream": 7,
             "grid": (8, 4, 1), "block": (128, 1, 1), "kLongName": GEMM},
            {"kShortName": RELU_SHORT, "kDuration": 4000, "layer": ["relu1"], "trace": ["net.py:21"], "reprMarkers": [],
             "marker": ["{'mod': 'torch.nn.functional', 'op': 'relu', 'args': [{'name': '', 'type': 'tensor', "
                        "'shape': (64, 512), 'dtype': 'float32'}]}"],
             "seqMarker": ["aten::relu, seq = 8"], "seqId": [8], "subSeqId": 0, "altSeqId": [], "dir": "fprop",
             "mod": ["torch.nn.functional"], "op": ["relu"], "tid": 4243, "device": 0, "stream": 7,
             "grid": (64, 1, 1), "block": (128, 1, 1), "kLongName": RELU},
            {"kShortName": GEMM_SHORT, "kDuration": 40000, "layer": ["fc1"], "trace": ["net.py:30"], "reprMarkers": [],
             "marker": [], "seqMarker": ["AddmmBackward0, stashed seq=7"], "seqId": [7], "subSeqId": 0, "altSeqId": [],
             "dir": "bprop", "mod": ["torch.nn.functional"], "op": ["linear"], "tid": 4243, "device": 0, "stream": 7,
             "grid": (8, 4, 1), "block": (128, 1, 1), "kLongName": GEMM},
        ]) + "{'kShortName': 'broken', 'kDuration': \n",
    "pyprof_prof.csv": '''"Idx","Direction","Sub","Module","Op","Kernel","Params","Sil(ns)","Grid","Block","FLOPs","Bytes"
"0","fprop","0","torch.nn.functional","linear","gemm_kernel","M=64,N=512,K=256,type=fp32","30000","8,4,1","128,1,1","16777216","720896"
"1","fprop","0","torch.nn.functional","relu","elementwise_kernel","T=(64,512),type=fp32","4000","64,1,1","128,1,1","32768","262144"
"2","bprop","0","torch.nn.functional","linear","gemm_kernel","M=64,N=256,K=512,type=fp32","40000","8,4,1","128,1,1","16777216","720896"
''',
    "pyprof_prof.txt": '''Idx  Direction  Sub  Module               Op      Kernel              Sil(ns)  FLOPs
0    fprop      0    torch.nn.functional  linear  gemm_kernel         30000    16777216
1    fprop      0    torch.nn.functional  relu    elementwise_kernel  4000     32768
2    bprop      0    torch.nn.functional  linear  gemm_kernel         40000    16777216
''',
}


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    nsys("nsys_2022_pytorch.sqlite", 2022)
    nsys("nsys_2024_pytorch.sqlite", 2024)
    nvvp("nvprof_markers.nvvp")
    for name, text in TEXT_SAMPLES.items():
        (OUT / name).write_text(text, encoding="utf-8")
    print(f"wrote {len(TEXT_SAMPLES) + 3} samples to {os.path.relpath(OUT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
