"""Patches a checkout of delbek/blest (9be20d9) to read <dir>/<name>.mtx instead of
downloading the matrix from SuiteSparse, as session12-call3.sh ran it. Run from the
checkout's root (a copy in an ignored folder; BLEST's code is never committed here)."""
s = open('Benchmark.cuh').read()
s = s.replace('#include "SuiteSparseMatrixDownloader.hpp"\n', '')
a = s.index('void Benchmark::main(const Config& config)\n{')
b = s.index('double Benchmark::run(const Matrix& matrix)')
s = s[:a] + '''void Benchmark::main(const Config& config)
{
    // Comparison build: the graph is read from <dir>/<name>.mtx (symmetric, integer
    // values) instead of being downloaded.
    JACKARD_ON = config.jackardEnabled;
    WINDOW_SIZE = config.windowSize;
    Matrix currentMatrix(config.directory + config.matrixName + ".mtx", config.directory + config.matrixName + ".txt", true, false);
    double time = run(currentMatrix);
    std::cout << "Time: " << time << " ms." << std::endl;
}

''' + s[b:]
open('Benchmark.cuh', 'w').write(s)
