// Fills an XForm in JavaRosa, the engine of ODK Collect and KoboCollect, the way a
// respondent does, and writes what the device would store at each step.
//
// Compiled by tests/field/clients.py against the JavaRosa that pyxform's ODK Validate
// jar ships (the same jar is the classpath); nothing else is needed.
//
// Usage: java FillForm FORM.xml OUTDIR RUNS NAME=FIRST[/SECOND] ...
//        java FillForm --jobs JOBS.tsv RESULTS.txt
// The second form fills many forms in one JVM (a JVM start costs a second or two):
// each line of JOBS.tsv is one job, FORM.xml<TAB>OUTDIR<TAB>RUNS<TAB>NAME=... (the
// arguments of the first form), and RESULTS.txt gets one line per job, in order: OK, or
// ERROR<TAB>the exception that stopped it (the job's runs after it are not filled; the
// next job runs). Jobs share JavaRosa's random generator as runs do.
//
// Each run r (1..RUNS) fills a new instance in this one JVM, so the runs share
// JavaRosa's random generator as the forms of one Collect session do, and writes:
//   start-r.xml       the draft Collect saves right after the form opens
//   answered-r.xml    the draft after every question is answered (and one answer
//                     cleared and given again)
//   again-cleared-r.xml, reopen-cleared-r.xml
//                     the draft just after the first question's answer was cleared, in
//                     the open form and in the reopened draft
//   submission-r.xml  the finalized submission (what is sent to the server)
//   events-r.tsv      STEP<TAB>NAME<TAB>TEXT: every note shown, and for every question
//                     its label (QUESTION ...), a select's choice labels (CHOICES a | b)
//                     and the answer given (ANSWER ...)
// Steps: fill (first pass), back (going back over the form), again (after clearing
// the first question's answer), reopen (the draft reopened and the answer cleared).
// Answers use FIRST on the first pass and SECOND (default FIRST) after clearing; an empty
// answer leaves a question empty. NAME!=BAD[|BAD...]: before each answer to NAME, each BAD
// is given and must be refused (a constraint), logged as REFUSED.

import java.io.ByteArrayOutputStream;
import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.javarosa.core.model.Constants;
import org.javarosa.core.model.FormDef;
import org.javarosa.core.model.FormIndex;
import org.javarosa.core.model.IDataReference;
import org.javarosa.core.model.SelectChoice;
import org.javarosa.core.model.SubmissionProfile;
import org.javarosa.core.model.ValidateOutcome;
import org.javarosa.core.model.data.IAnswerData;
import org.javarosa.core.model.data.SelectOneData;
import org.javarosa.core.model.data.StringData;
import org.javarosa.core.model.data.helper.Selection;
import org.javarosa.core.model.instance.FormInstance;
import org.javarosa.core.model.instance.InstanceInitializationFactory;
import org.javarosa.core.model.instance.TreeElement;
import org.javarosa.core.services.transport.payload.ByteArrayPayload;
import org.javarosa.form.api.FormEntryController;
import org.javarosa.form.api.FormEntryModel;
import org.javarosa.form.api.FormEntryPrompt;
import org.javarosa.model.xform.XFormSerializingVisitor;
import org.javarosa.model.xform.XFormsModule;
import org.javarosa.model.xform.XPathReference;
import org.javarosa.xform.parse.XFormParser;
import org.javarosa.xform.util.XFormUtils;

public class FillForm {
    private final Path form;
    private final Path out;
    private final Map<String, String> first = new LinkedHashMap<>();
    private final Map<String, String> second = new LinkedHashMap<>();
    private final Map<String, List<String>> refused = new LinkedHashMap<>();
    private String firstQuestion;
    private PrintWriter events;

    FillForm(Path form, Path out, List<String> answers) {
        this.form = form;
        this.out = out;
        for (String pair : answers) {
            int eq = pair.indexOf('=');
            String name = pair.substring(0, eq);
            if (name.endsWith("!")) {
                refused.put(name.substring(0, name.length() - 1),
                        List.of(pair.substring(eq + 1).split("\\|")));
                continue;
            }
            String[] values = pair.substring(eq + 1).split("/", 2);
            first.put(name, values[0]);
            second.put(name, values.length > 1 ? values[1] : values[0]);
            if (firstQuestion == null && !name.equals("respondent_id") && !name.equals("group")) {
                firstQuestion = name;
            }
        }
    }

    public static void main(String[] args) throws Exception {
        // Registers the factory that parses saved answers (RestoreUtils), as Collect does.
        new XFormsModule().registerModule();
        if (args[0].equals("--jobs")) {
            try (PrintWriter results = new PrintWriter(Files.newBufferedWriter(
                    Paths.get(args[2]), StandardCharsets.UTF_8))) {
                for (String job : Files.readAllLines(Paths.get(args[1]), StandardCharsets.UTF_8)) {
                    if (job.isEmpty()) {
                        continue;
                    }
                    try {
                        fill(job.split("\t", -1));
                        results.println("OK");
                    } catch (Exception e) {
                        results.println("ERROR\t" + String.valueOf(e).replace("\n", "\\n"));
                    }
                    results.flush();
                }
            }
            return;
        }
        fill(args);
    }

    // FORM OUTDIR RUNS NAME=... : every run of one form.
    private static void fill(String[] args) throws Exception {
        List<String> answers = new ArrayList<>();
        for (int i = 3; i < args.length; i++) {
            answers.add(args[i]);
        }
        FillForm filler = new FillForm(Paths.get(args[0]), Paths.get(args[1]), answers);
        int runs = Integer.parseInt(args[2]);
        for (int run = 1; run <= runs; run++) {
            try {
                filler.run(run);
            } finally {
                if (filler.events != null) {
                    filler.events.close();
                }
            }
        }
    }

    private FormDef load() throws Exception {
        try (InputStream in = new FileInputStream(form.toFile())) {
            FormDef formDef = XFormUtils.getFormFromInputStream(in);
            formDef.getLocalizer().setToDefault();
            return formDef;
        }
    }

    void run(int run) throws Exception {
        events = new PrintWriter(Files.newBufferedWriter(out.resolve("events-" + run + ".tsv"),
                StandardCharsets.UTF_8));
        FormDef formDef = load();
        formDef.initialize(true, new InstanceInitializationFactory());
        FormEntryController controller = new FormEntryController(new FormEntryModel(formDef));
        write("start-" + run + ".xml", draft(formDef));

        // First pass: every screen in order, answering each question.
        controller.jumpToIndex(FormIndex.createBeginningOfFormIndex());
        while (controller.stepToNextEvent() != FormEntryController.EVENT_END_OF_FORM) {
            visit(controller, "fill", first);
        }
        // Go back over the whole form, as a respondent swiping back does.
        FormIndex firstIndex = null;
        while (controller.stepToPreviousEvent() != FormEntryController.EVENT_BEGINNING_OF_FORM) {
            FormEntryPrompt prompt = controller.getModel().getQuestionPrompt();
            if (isNote(prompt)) {
                log("back", name(prompt), prompt.getLongText());
            } else if (name(prompt).equals(firstQuestion)) {
                firstIndex = prompt.getIndex();
            }
        }
        // Clear the first question's answer, look at its notes again, answer again.
        clearAndAnswerAgain(formDef, controller, firstIndex, "again", run);
        write("answered-" + run + ".xml", draft(formDef));

        // Reopen the saved draft as Collect does (FormLoaderTask.importData), clear and answer.
        FormDef reopened = load();
        FormInstance saved = XFormParser.restoreDataModel(
                Files.readAllBytes(out.resolve("answered-" + run + ".xml")), null);
        TreeElement template = reopened.getMainInstance().getRoot().deepCopy(true);
        template.populate(saved.getRoot(), reopened);
        reopened.getMainInstance().setRoot(template);
        reopened.initialize(false, new InstanceInitializationFactory());
        FormEntryController again = new FormEntryController(new FormEntryModel(reopened));
        FormIndex index = null;
        again.jumpToIndex(FormIndex.createBeginningOfFormIndex());
        while (again.stepToNextEvent() != FormEntryController.EVENT_END_OF_FORM) {
            FormEntryPrompt prompt = again.getModel().getQuestionPrompt();
            if (name(prompt).equals(firstQuestion)) {
                index = prompt.getIndex();
                break;
            }
        }
        clearAndAnswerAgain(reopened, again, index, "reopen", run);

        // Finalize: Collect post-processes the instance, checks it, and serializes the
        // submission with relevance respected.
        ValidateOutcome outcome = reopened.validate(true);
        if (outcome != null) {
            throw new IllegalStateException("form does not validate at "
                    + outcome.failedPrompt + " (outcome " + outcome.outcome + ")");
        }
        reopened.postProcessInstance();
        write("submission-" + run + ".xml", submission(reopened));
        events.close();
    }

    private void clearAndAnswerAgain(FormDef formDef, FormEntryController controller,
            FormIndex index, String step, int run) throws Exception {
        if (index == null) {
            throw new IllegalStateException("question " + firstQuestion + " not found");
        }
        controller.jumpToIndex(index);
        controller.saveAnswer(index, null, true);
        write(step + "-cleared-" + run + ".xml", draft(formDef));
        // Step back to the notes before the question: they show again once it is empty.
        List<String[]> shown = new ArrayList<>();
        while (controller.stepToPreviousEvent() != FormEntryController.EVENT_BEGINNING_OF_FORM) {
            FormEntryPrompt prompt = controller.getModel().getQuestionPrompt();
            if (!isNote(prompt)) {
                break;
            }
            shown.add(0, new String[] {name(prompt), prompt.getLongText()});
        }
        for (String[] note : shown) {
            log(step, note[0], note[1]);
        }
        controller.jumpToIndex(index);
        visit(controller, step, second);
    }

    private void visit(FormEntryController controller, String step, Map<String, String> answers) {
        if (controller.getModel().getEvent() != FormEntryController.EVENT_QUESTION) {
            return;
        }
        FormEntryPrompt prompt = controller.getModel().getQuestionPrompt();
        String name = name(prompt);
        if (isNote(prompt)) {
            log(step, name, prompt.getLongText());
            return;
        }
        String value = answers.get(name);
        if (value == null) {
            throw new IllegalStateException("no answer given for " + name);
        }
        // What the respondent reads: the question's label and, for a select, its choices.
        log(step, name, "QUESTION " + prompt.getLongText());
        if (prompt.getControlType() == Constants.CONTROL_SELECT_ONE) {
            List<String> labels = new ArrayList<>();
            for (SelectChoice choice : prompt.getSelectChoices()) {
                labels.add(prompt.getSelectChoiceText(choice));
            }
            log(step, name, "CHOICES " + String.join(" | ", labels));
        }
        for (String bad : refused.getOrDefault(name, List.of())) {
            if (controller.answerQuestion(data(prompt, name, bad), true)
                    == FormEntryController.ANSWER_OK) {
                throw new IllegalStateException(name + " accepted " + bad);
            }
            log(step, name, "REFUSED " + bad);
        }
        int status = controller.answerQuestion(data(prompt, name, value), true);
        if (status != FormEntryController.ANSWER_OK) {
            log(step, name, "REFUSED " + status + " " + value);
            throw new IllegalStateException(name + " refused " + value + " (status " + status + ")");
        }
        log(step, name, "ANSWER " + value);
    }

    private static IAnswerData data(FormEntryPrompt prompt, String name, String value) {
        if (value.isEmpty()) {
            return null;
        }
        if (prompt.getControlType() != Constants.CONTROL_SELECT_ONE) {
            return new StringData(value);
        }
        for (SelectChoice choice : prompt.getSelectChoices()) {
            if (choice.getValue().equals(value)) {
                return new SelectOneData(new Selection(choice));
            }
        }
        throw new IllegalStateException(name + " has no choice " + value);
    }

    private static boolean isNote(FormEntryPrompt prompt) {
        return prompt.isReadOnly() && prompt.getControlType() == Constants.CONTROL_INPUT;
    }

    private static String name(FormEntryPrompt prompt) {
        return prompt.getIndex().getReference().getNameLast();
    }

    private void log(String step, String name, String text) {
        events.println(step + "\t" + name + "\t" + String.valueOf(text).replace("\n", "\\n"));
        events.flush();
    }

    // Collect's drafts: FormController.getFilledInFormXml (the default serializer).
    private static byte[] draft(FormDef formDef) throws IOException {
        ByteArrayPayload payload = (ByteArrayPayload) new XFormSerializingVisitor()
                .createSerializedPayload(formDef.getInstance());
        return bytes(payload.getPayloadStream());
    }

    // Collect's submissions: FormController.getSubmissionXml.
    private static byte[] submission(FormDef formDef) throws IOException {
        SubmissionProfile profile = formDef.getSubmissionProfile();
        IDataReference ref = profile == null || profile.getRef() == null
                ? new XPathReference("/") : profile.getRef();
        ByteArrayPayload payload = (ByteArrayPayload) new XFormSerializingVisitor()
                .createSerializedPayload(formDef.getInstance(), ref);
        return bytes(payload.getPayloadStream());
    }

    private static byte[] bytes(InputStream in) throws IOException {
        ByteArrayOutputStream buffer = new ByteArrayOutputStream();
        in.transferTo(buffer);
        return buffer.toByteArray();
    }

    private void write(String name, byte[] content) throws IOException {
        Files.write(out.resolve(name), content);
    }
}
