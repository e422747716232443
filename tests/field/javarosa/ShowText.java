// Prints every text of an XForm as JavaRosa, the engine of ODK Collect and KoboCollect,
// hands it to the app for display: the form title, and for every question and note
// (relevant or not) its label, hint, constraint message and choice labels.
//
// Compiled by tests/field_clients.py against the JavaRosa that pyxform's ODK Validate
// jar ships (the same jar is the classpath); nothing else is needed.
//
// Usage: java ShowText FORM.xml ...
//
// Writes, for each form, the line <TAB>form<TAB>FORM.xml and then one line per text:
// NAME<TAB>ROLE<TAB>TEXT, ROLE one of title, label, hint, constraint, choice; TEXT with \ written as \\, line feed as \n,
// carriage return as \r and tab as \t, so that every text is one line and can be read
// back exactly. A text JavaRosa cannot show (an exception while filling it in) is the
// line NAME<TAB>ROLE<TAB>!ERROR ExceptionClass: message.

import java.io.FileInputStream;
import java.io.InputStream;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Callable;

import org.javarosa.core.model.Constants;
import org.javarosa.core.model.FormDef;
import org.javarosa.core.model.FormIndex;
import org.javarosa.core.model.QuestionDef;
import org.javarosa.core.model.SelectChoice;
import org.javarosa.core.model.instance.InstanceInitializationFactory;
import org.javarosa.form.api.FormEntryModel;
import org.javarosa.form.api.FormEntryPrompt;
import org.javarosa.model.xform.XFormsModule;
import org.javarosa.xform.util.XFormUtils;

public class ShowText {
    private static PrintWriter out;

    public static void main(String[] args) throws Exception {
        new XFormsModule().registerModule();
        out = new PrintWriter(new OutputStreamWriter(System.out, StandardCharsets.UTF_8));
        for (String form : args) {
            out.println("\tform\t" + form);
            show(form);
        }
        out.flush();
    }

    private static void show(String form) throws Exception {
        FormDef formDef;
        try (InputStream in = new FileInputStream(form)) {
            formDef = XFormUtils.getFormFromInputStream(in);
        }
        formDef.getLocalizer().setToDefault();
        formDef.initialize(true, new InstanceInitializationFactory());
        FormEntryModel model = new FormEntryModel(formDef);
        print("", "title", model::getFormTitle);
        FormIndex index = model.incrementIndex(FormIndex.createBeginningOfFormIndex(), true);
        while (!index.isEndOfFormIndex()) {
            if (formDef.getChild(index) instanceof QuestionDef) {
                FormEntryPrompt prompt = model.getQuestionPrompt(index);
                String name = index.getReference().getNameLast();
                print(name, "label", prompt::getLongText);
                print(name, "hint", prompt::getHelpText);
                print(name, "constraint", prompt::getConstraintText);
                int control = prompt.getControlType();
                if (control == Constants.CONTROL_SELECT_ONE
                        || control == Constants.CONTROL_SELECT_MULTI) {
                    for (SelectChoice choice : prompt.getSelectChoices()) {
                        print(name, "choice", () -> prompt.getSelectChoiceText(choice));
                    }
                }
            }
            index = model.incrementIndex(index, true);
        }
    }

    private static void print(String name, String role, Callable<String> text) {
        String shown;
        try {
            shown = text.call();
        } catch (Exception e) {
            shown = "!ERROR " + e.getClass().getSimpleName() + ": " + e.getMessage();
        }
        if (shown == null) {
            return;
        }
        out.println(name + "\t" + role + "\t" + shown.replace("\\", "\\\\").replace("\n", "\\n")
                .replace("\r", "\\r").replace("\t", "\\t"));
    }
}
