package io.sealpipe.hadoop;

import java.io.IOException;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.mapreduce.JobContext;
import org.apache.hadoop.mapreduce.JobStatus;
import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.apache.hadoop.mapreduce.lib.output.PathOutputCommitter;
import org.apache.hadoop.mapreduce.lib.output.PathOutputCommitterFactory;

/**
 * An output committer factory for a sealed scheme that commits with the wrapped scheme's own
 * committer, so that jobs writing to {@code ss3a://} can use S3A's committers, the magic one
 * among them:
 *
 * <pre>
 * mapreduce.outputcommitter.factory.scheme.ss3a = io.sealpipe.hadoop.SealedCommitterFactory
 * fs.s3a.committer.name                         = magic
 * </pre>
 *
 * <p>The committer is the one the wrapped scheme's factory makes for the wrapped output path
 * ({@code mapreduce.outputcommitter.factory.scheme.s3a}: Hadoop's default is S3A's
 * {@code S3ACommitterFactory}, which picks {@code fs.s3a.committer.name}). It runs on the wrapped
 * file system: its own records (S3A's {@code .pending} files, {@code _SUCCESS}) are plain
 * objects, holding upload ids and lengths, no data. Tasks write through the sealed scheme: the
 * committer's work path is handed out as its sealed view, so every data file is sealed as it is
 * written, and the committer then publishes the stored bytes (S3A's magic committer completes
 * the multipart uploads the sealed files made). A committer whose work path lies on another file
 * system (S3A's staging committers, {@code directory} and {@code partitioned}, stage task output
 * on the local disk and upload it as it is) is refused: its output would not be sealed.
 */
@SuppressWarnings("exports") // Hadoop's types in this API: module-info.java says why they are not "requires transitive"
public class SealedCommitterFactory extends PathOutputCommitterFactory {
    /** Made by MapReduce, from the class named in {@code mapreduce.outputcommitter.factory.scheme.SCHEME}. */
    public SealedCommitterFactory() {}

    @Override
    public PathOutputCommitter createOutputCommitter(Path outputPath, TaskAttemptContext context) throws IOException {
        Configuration conf = context.getConfiguration();
        FileSystem fs = outputPath.getFileSystem(conf);
        if (!(fs instanceof SealedFileSystem)) {
            throw new IOException(getClass().getName() + " commits sealed output only, and " + outputPath + " is on "
                    + fs.getClass().getName() + ": set it for sealed schemes only (mapreduce.outputcommitter.factory.scheme."
                    + outputPath.toUri().getScheme() + ")");
        }
        SealedFileSystem sealed = (SealedFileSystem) fs;
        Path wrapped = sealed.toWrapped(outputPath);
        PathOutputCommitter committer = PathOutputCommitterFactory.getCommitterFactory(wrapped, conf)
                .createOutputCommitter(wrapped, context);
        return new SealedCommitter(sealed, sealed.makeQualified(outputPath), context, committer);
    }

    /** The wrapped scheme's committer, its work path given as the sealed view of it. */
    static final class SealedCommitter extends PathOutputCommitter {
        private final SealedFileSystem fs;
        private final Path outputPath;
        private final PathOutputCommitter committer;

        SealedCommitter(SealedFileSystem fs, Path outputPath, TaskAttemptContext context, PathOutputCommitter committer)
                throws IOException {
            super(outputPath, context);
            this.fs = fs;
            this.outputPath = outputPath;
            this.committer = committer;
            workPath(); // refuses a committer that stages output elsewhere, before any task writes
        }

        @Override
        public Path getOutputPath() {
            return outputPath;
        }

        /**
         * The wrapped committer's work path under the sealed scheme.
         *
         * @throws IOException if it lies on another file system, where task output would not be sealed
         */
        @Override
        public Path getWorkPath() throws IOException {
            return workPath();
        }

        private Path workPath() throws IOException {
            Path work = committer.getWorkPath();
            if (work == null) {
                return null;
            }
            String scheme = work.toUri().getScheme();
            FileSystem wrapped = fs.getWrappedFileSystem();
            if (scheme != null && !wrapped.getUri().getScheme().equalsIgnoreCase(scheme)) {
                throw new IOException(committer.getClass().getName() + " stages task output in " + work + ", outside "
                        + fs.getWrappedFileSystem().getUri() + ", and uploads it as it is: the output to " + outputPath
                        + " would not be sealed. Use a committer that writes where the output goes: S3A's magic committer"
                        + " (fs.s3a.committer.name=magic) or the classic one (file)");
            }
            return fs.fromWrapped(wrapped.makeQualified(work));
        }

        @Override
        public void setupJob(JobContext jobContext) throws IOException {
            committer.setupJob(jobContext);
        }

        @Override
        public void commitJob(JobContext jobContext) throws IOException {
            committer.commitJob(jobContext);
        }

        @Override
        public void abortJob(JobContext jobContext, JobStatus.State state) throws IOException {
            committer.abortJob(jobContext, state);
        }

        @Override
        @SuppressWarnings("deprecation")
        public void cleanupJob(JobContext jobContext) throws IOException {
            committer.cleanupJob(jobContext);
        }

        @Override
        public void setupTask(TaskAttemptContext taskContext) throws IOException {
            committer.setupTask(taskContext);
        }

        @Override
        public boolean needsTaskCommit(TaskAttemptContext taskContext) throws IOException {
            return committer.needsTaskCommit(taskContext);
        }

        @Override
        public void commitTask(TaskAttemptContext taskContext) throws IOException {
            committer.commitTask(taskContext);
        }

        @Override
        public void abortTask(TaskAttemptContext taskContext) throws IOException {
            committer.abortTask(taskContext);
        }

        @Override
        @SuppressWarnings("deprecation")
        public boolean isRecoverySupported() {
            return committer.isRecoverySupported();
        }

        @Override
        public boolean isRecoverySupported(JobContext jobContext) throws IOException {
            return committer.isRecoverySupported(jobContext);
        }

        @Override
        public boolean isCommitJobRepeatable(JobContext jobContext) throws IOException {
            return committer.isCommitJobRepeatable(jobContext);
        }

        @Override
        public void recoverTask(TaskAttemptContext taskContext) throws IOException {
            committer.recoverTask(taskContext);
        }

        @Override
        public String toString() {
            return "SealedCommitter(" + outputPath + " with " + committer + ")";
        }
    }
}
